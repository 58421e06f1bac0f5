import Foundation
import KeychainCrypto
import Logging
import SyncCore
import SyncProtocol

/// The one driver of SyncCore's ``ZoneSyncMachine`` (decision 0170), for every zone of the
/// client: the machine decides, the driver does the I/O. It takes local changes from its
/// ``ZoneLocalStore`` (the keychain, a key-value store, the directory of stores), seals and opens
/// blobs, talks to a ``ZoneServer``, hands the machine's effects to the local store and commits
/// the machine's durable state (decision 0052).
///
/// Crash safety: before every request, the effects decided since the last one are applied in one
/// local transaction, then the machine's state and the local change position are committed
/// together; so a restart replays at most the last page and resends at most the unanswered batch
/// (stale at the server). When the local store refuses an apply because an item it writes changed
/// locally meanwhile, the round starts again from the committed state, taking the local change
/// first (decision 0054). After a crash between the two commits, the items the local store holds
/// ahead of the state are marked so their next pulled version is applied (decision 0107).
package actor ZoneDriver<Local: ZoneLocalStore> {
    package let zone: ZoneID
    package let database: ClientStateDatabase
    package let server: any ZoneServer
    package let sealer: VersionSealer
    /// Reads and publishes the zone's signed statements (decision 0180), and says who may write
    /// its versions and what this device signs them as; nil: none.
    let witness: ZoneWitness?
    package internal(set) var local: Local
    let logger: Logger
    let configuration: ZoneSyncMachine.Configuration
    var machine: ZoneSyncMachine
    var committed: ZoneSyncState
    var progress: ClientStateDatabase.ZoneProgress
    var committedProgress: ClientStateDatabase.ZoneProgress
    /// Problems to record (a reason) or clear (nil) with the next commit, in order.
    var problems: [(ItemID, String?)] = []
    /// The local effects decided since the last request, applied together before the next one.
    var effects: [LocalApply.Effect] = []
    /// The items whose records may differ from the committed state; nil: any may (a full resync).
    var touched: Set<ItemID>? = []
    /// Items set aside for a refusal that may pass now, put back to be pushed: their problem is
    /// cleared once the server takes them.
    var retried: Set<ItemID> = []
    /// The items the round in progress reported as left out of a full resync.
    var unlistedThisRound: Set<ItemID> = []
    /// Whether the round in progress read the whole feed (a first pull or a full resync).
    var readWholeFeed = false
    /// The items the local store holds ahead of the committed state (decision 0107).
    var ahead: Set<ItemID> = []
    /// The blobs of the last batch this process sealed and pushed, with the versions they seal:
    /// the same bytes pulled back mean exactly those versions, so they are not opened and
    /// checked again (issue 35).
    var lastPushed: [ItemID: (blob: [UInt8], version: ItemVersion)] = [:]
    /// The versions of the batch the machine expects next, being sealed while the last push is
    /// out (``ZoneSyncMachine/followingBatch``); nil when none is.
    var sealingAhead: Task<SealedAhead, Never>?
    /// Holds and releases of arrivals the local store could not apply yet, committed with the
    /// next state commit, in order (decision 0137).
    var heldChanges: [ClientStateDatabase.HeldChange] = []
    /// The items with a held arrival, the uncommitted changes included.
    var heldItems: Set<ItemID> = []
    /// Those of them held for a key epoch not read yet (decision 0251), as the round found them.
    var heldForAnEpoch: Set<ItemID> = []
    /// Whether the round in progress is the zone's first.
    var isInitialSync = false
    /// The statements of the round in progress, read but not yet checked (decision 0190).
    var statementsInFlight: Task<StatementListResponse, any Error>?
    /// Whether the round in progress checked, before its first push, that no current member
    /// states a later key epoch than this device's log reaches (decision 0250).
    var checkedEpochBeforePush = false
    /// The log and statements checked before the first pull of the round in progress.
    var witnessed: ZoneWitness.Witnessed?
    /// What the statements' check asks of the rounds (R59, R62).
    var findings = StatementFindings()
    /// Items whose copies lack the class layer they need (written before decision 0237): sealed
    /// again by the first commit while the keychain is unlocked.
    var resealing: Set<ItemID> = []
    /// Whether some copy was loaded still sealed under a class locked away (decision 0237): the
    /// first round after the unlock loads the state again.
    var hasSealedAway = false
    /// Whether the key pair held arrivals are sealed to exists (decision 0238).
    var hasHeldArrivalKey = false
    /// The digest terms of the zone's items, kept between rounds (decision 0180).
    var viewCache: ZoneStateViewCache?
    /// What the statements had found when the round in progress began (a round started again
    /// for the records starts from it, decision 0284).
    var findingsAtStart = StatementFindings()
    /// Whether the machine holds the zone's records. A start whose state has nothing waiting (no
    /// record pending, set aside or perhaps on the server, no unanswered batch, no held arrival,
    /// nothing ahead in the local store) loads none, and the view of them the state file keeps
    /// stands in, until a local change, a page with items or a full resync needs them
    /// (``adoptRecords()``): a quiet sync costs what changed, not the zone's size (issue 35).
    var recordsLoaded = true
    /// The view of the committed records the state file kept, while they are not loaded.
    var committedView: ZoneStateView?
    var onProgress: (@Sendable (Int) -> Void)?
    var beforeApply: (@Sendable () throws -> Void)?
    var afterApply: (@Sendable () throws -> Void)?

    package init(
        local: Local, database: ClientStateDatabase, server: any ZoneServer, sealer: VersionSealer, device: DeviceID,
        configuration: ZoneSyncMachine.Configuration = .client, witness: ZoneWitness? = nil, logger: Logger
    ) throws(SyncClientError) {
        self.witness = witness
        zone = server.zone
        self.database = database
        self.server = server
        let sealer = sealer.with(classLayer: local.stateClassLayer).with(signer: witness?.signingKey, as: witness?.versionSigner ?? device)
        self.sealer = sealer
        self.logger = logger
        self.configuration = configuration
        heldItems = try database.heldItems(server.zone)
        var local = local
        var unlayered: Set<ItemID> = []
        if heldItems.isEmpty, let (head, headProgress, view) = try database.loadZoneHead(server.zone, device: device, needsView: witness != nil),
            try SyncClientError.mapping({ try local.holdsNothingAhead(appliesCovered: headProgress.appliesCovered) })
        {
            (committed, progress, committedView, recordsLoaded) = (head, headProgress, view, false)
        } else {
            let (loaded, loadedProgress) = try database.loadZone(server.zone, device: device, sealer: sealer, unlayered: &unlayered)
            (committed, progress) = (loaded, loadedProgress)
            ahead = try SyncClientError.mapping {
                try local.itemsAhead(of: loaded, position: loadedProgress.journalSequence, appliesCovered: loadedProgress.appliesCovered)
            }
        }
        resealing = unlayered
        hasSealedAway = Self.holdsSealedAwayCopies(committed, sealer: sealer)
        committedProgress = progress
        self.local = local
        machine = ZoneSyncMachine(restoring: committed, configuration: configuration)
        retried = Set(machine.retrySetAside())
        touched = retried.union(local.sentAhead)
        machine.markLocalValueUnknown(ahead, applied: local.appliedAhead)
        machine.markSentSinceCommit(local.sentAhead)
        // A finding recorded by an earlier process: its next round, this one's first, reads the
        // whole feed again (R62), as it would have in that process.
        if witness != nil, try database.hasAccountStateProblem(zone) { findings.fellShort() }
    }

    /// Whether the driver holds the zone's records: false after a start that found nothing waiting,
    /// until a round needs them (``recordsLoaded``).
    package var holdsRecords: Bool { recordsLoaded }

    /// Reports the number of items applied so far in a round (for a progress indicator).
    package func setProgressHandler(_ handler: (@Sendable (Int) -> Void)?) { onProgress = handler }

    /// Calls `before` right before, and `after` right after, every local apply of pulled changes;
    /// an error thrown fails the round there. For tests: they land a local write inside the race
    /// window, or fail a round between the apply and the state commit (decisions 0054, 0107).
    package func setApplyHooks(before: (@Sendable () throws -> Void)? = nil, after: (@Sendable () throws -> Void)? = nil) {
        beforeApply = before
        afterApply = after
    }

    /// The machine's records (what the zone holds as far as this device knows); read from the
    /// state file while the driver has not loaded them.
    package var records: [ItemID: ZoneSyncState.Record] {
        get throws(SyncClientError) {
            guard !recordsLoaded else { return machine.state.records }
            return try database.loadZone(zone, device: committed.device, sealer: sealer).0.records
        }
    }

    /// How far the zone's feed is pulled and applied, as committed.
    package var cursor: UInt64 { committed.cursor }

    /// Whether local changes are waiting to be pushed.
    package var hasPendingChanges: Bool { machine.hasPendingChanges }

    /// How many pulled items wait for the unlock (decision 0137).
    package var waitingForUnlock: Int { heldItems.subtracting(heldForAnEpoch).count }
    /// Pulled items held because they are sealed under a key epoch this device has not read in
    /// the device log yet (decision 0251).
    package var waitingForAnEpoch: Int { heldForAnEpoch.intersection(heldItems).count }

    /// How many local changes wait for the unlock before they are pushed (decision 0237).
    package var pushesWaitingForUnlock: Int { machine.localStore.waitingForUnlock.count }

    /// The items whose local versions are set aside, unpushed, because the server will not take
    /// them (each is a problem in `status`).
    package var setAside: [ItemID: ItemRefusal] { machine.state.records.compactMapValues(\.refusal) }

    /// Whether the local store has changes this driver has not taken yet, or can now take a held
    /// arrival (the keychain was unlocked, decision 0137): a cheap check before the daemon starts
    /// a round; true when the store cannot tell.
    package func hasNewLocalChanges() -> Bool {
        (try? local.hasLocalChanges(after: progress.journalSequence, state: machine.state)) ?? true || hasReleasableArrivals()
    }

    /// Runs rounds until the zone is in step with the server, at most `maximumRounds`;
    /// `prepare` runs in the first, before anything is taken or pushed (``round(prepare:)``), and
    /// once more when arrivals wait for a key epoch.
    ///
    /// - Throws: ``SyncClientError`` `rejectedVersions` when some pulled versions were rejected,
    ///   `notInStep` when the rounds ran out, or the I/O error that stopped a round.
    @discardableResult
    package func syncUntilInStep(
        maximumRounds: Int = 100, prepare: (@Sendable () async throws -> Void)? = nil
    ) async throws -> SyncRoundReport {
        let subject = zone == .keychain ? "" : "zone \(zone): "
        var next = prepare
        var readsAgain = prepare != nil
        var gaveBack = false
        return try await .summingRounds(maximumRounds: maximumRounds, subject: subject) {
            var report: SyncRoundReport
            do {
                report = try await round(prepare: next)
            } catch let error as SyncClientError where error.code == .untrustedAccountState && findings.givesBackNext && !gaveBack {
                // The server no longer holds, or serves every device, what this device stated
                // last: the next round, in this same sync, gives it back, and reports the finding
                // once it committed (R59, decision 0287).
                gaveBack = true
                return SyncRoundReport()
            }
            next = nil
            // Arrivals sealed under a key epoch that the log read before did not show: a
            // revocation that landed since, or a server that withholds it. The log is read once
            // more, and the round after takes them if it shows the epoch (decision 0251).
            if report.inStep, readsAgain, waitingForAnEpoch > 0 {
                readsAgain = false
                next = prepare
                report.inStep = false
            }
            return report
        }
    }

    /// One round: take the local changes, push, pull until the feed is drained, push
    /// resolutions. After a failure the machine restarts from the committed state.
    ///
    /// - Parameter prepare: runs first, while the zone's statements are read (the key epochs'
    ///   refresh: what the round seals is sealed under the newest, decision 0179).
    package func round(prepare: (@Sendable () async throws -> Void)? = nil) async throws -> SyncRoundReport {
        // A round that ended waiting for an answer (it failed, or ran out of resends) is not
        // resumed: the next starts from the committed state, as after a restart.
        if !machine.isIdle { restoreCommitted() }
        findingsAtStart = findings
        startReadingStatements()
        let outcome: Result<SyncRoundReport, any Error>
        do {
            outcome = .success(try await takeChangesAndSync(prepare: prepare))
        } catch {
            outcome = .failure(error)
        }
        // Nothing of a round outlives it: a read of statements it did not take ends here.
        await abandonStatements()
        switch outcome {
        case .success(let report):
            return report
        case .failure(is LocalChangeRace):
            // A local write beat the page to the local store: start again from the committed
            // state; the next round takes the write before it pulls the page again.
            restoreCommitted()
            return SyncRoundReport()
        case .failure(is RecordsNeeded):
            // Something came that the records decide: the next round has them, and starts from
            // what this one found before it began.
            findings = findingsAtStart
            do {
                try reloadCommitted()
            } catch {
                restoreCommitted()
                throw error
            }
            return SyncRoundReport()
        case .failure(let error):
            restoreCommitted()
            throw SyncClientError.mapped(error)
        }
    }

    /// The body of ``round(prepare:)``: prepare, take the local changes, push and pull.
    private func takeChangesAndSync(prepare: (@Sendable () async throws -> Void)?) async throws -> SyncRoundReport {
        try await prepare?()
        try openSealedAwayCopies()
        makeHeldArrivalKey()
        isInitialSync = committed.cursor == 0
        if !recordsLoaded,
            try findings.resyncsNext || findings.givesBackNext || local.hasLocalChanges(after: progress.journalSequence, state: machine.state)
        {
            try adoptRecords()
        }
        try takeLocalChanges(timeBound: try await server.modificationTimeBound())
        var report = SyncRoundReport()
        let released = try releaseHeld(report: &report)
        try holdBackLockedPushes()
        // Never pushed and never pulled: the local items are reconciled before they are pushed.
        let fresh = machine.state.cursor == 0 && machine.state.nextBatchID == 1
        if machine.state.cursor == 0 { machine.localStore.returnsWithoutState = try local.hasSyncedBefore() }
        let starting = machine.startSync(reconcilingFirst: fresh, resyncing: findings.resyncsNext, givingBack: findings.givesBackNext)
        findings.roundStarts(readingWholeFeed: starting.contains { if case .pull(let request) = $0 { request.isFullResync } else { false } })
        unlistedThisRound = []
        readWholeFeed = false
        try await perform(released + starting, report: &report)
        if let standing = findings.standing { throw SyncClientError(.untrustedAccountState, standing) }
        if report.inStep, try local.hasLocalChanges(after: progress.journalSequence, state: machine.state) {
            report.inStep = false
        }
        return report
    }

    /// Starts again from the committed state, as a restart after a crash would.
    func restoreCommitted() {
        machine = ZoneSyncMachine(restoring: committed, configuration: configuration)
        progress = committedProgress
        problems.removeAll()
        effects.removeAll()
        heldChanges.removeAll()
        if let held = try? database.heldItems(zone) { heldItems = held }
        retried = Set(machine.retrySetAside())
        touched = retried
        // Unreadable now: the items found at the start stand. Without the records nothing was
        // applied, so nothing is ahead.
        if recordsLoaded,
            let found = try? local.itemsAhead(of: committed, position: progress.journalSequence, appliesCovered: progress.appliesCovered)
        {
            ahead = found
            touched?.formUnion(local.sentAhead)
            machine.markSentSinceCommit(local.sentAhead)
        }
        machine.markLocalValueUnknown(ahead, applied: local.appliedAhead)
    }

    /// Reads every record of the committed state, the first time (a start that loaded none) or
    /// again (copies sealed away while the keychain was locked open now), and starts the machine
    /// again from it, as a restart would.
    func reloadCommitted() throws(SyncClientError) {
        var unlayered: Set<ItemID> = []
        (committed, committedProgress) = try database.loadZone(zone, device: committed.device, sealer: sealer, unlayered: &unlayered)
        resealing.formUnion(unlayered)
        hasSealedAway = Self.holdsSealedAwayCopies(committed, sealer: sealer)
        recordsLoaded = true
        committedView = nil
        restoreCommitted()
    }

    /// Loads the records into the machine as it is, for what they decide (local changes to take,
    /// a resync to ask for, a page that lists items, an expired or restored feed): it read none of
    /// them to come this far, so the round goes on as it would have with the records from the
    /// start, with no request more.
    func adoptRecords() throws(SyncClientError) {
        var unlayered: Set<ItemID> = []
        let (loaded, _) = try database.loadZone(zone, device: committed.device, sealer: sealer, unlayered: &unlayered)
        committed = loaded
        resealing.formUnion(unlayered)
        hasSealedAway = Self.holdsSealedAwayCopies(loaded, sealer: sealer)
        recordsLoaded = true
        committedView = nil
        machine.adopt(records: loaded.records)
        logger.debug("zone records loaded", metadata: ["zone": "\(zone)", "records": "\(loaded.records.count)"])
    }

    /// Thrown when the local store refused an apply because of a local change it must not overwrite.
    struct LocalChangeRace: Error {}

    /// Thrown, before anything of it is taken, when a round without the records meets what they
    /// decide: a page with items, an expired or restored feed, a full resync, a push.
    struct RecordsNeeded: Error {}
}

import Foundation
import KeychainCrypto
import KeychainModel
import KeychainStore
import Logging
import SyncCore

/// Drives SyncCore's ``ZoneSyncMachine`` for one zone: the machine decides, this actor does the
/// I/O — reads the keychain's change journal, seals and opens blobs, talks to the server, applies
/// remote versions to the keychain and commits the machine's durable state (decision 0052).
///
/// Crash safety: a page's keychain effects are applied first, in one keychain transaction, and are
/// idempotent (history included); the machine's state and the consumed journal position are
/// committed together before every request, so a restart replays at most the last page and
/// resends at most the unanswered batch (stale at the server). A page is applied only if no item
/// it writes changed locally since the journal was read; otherwise the round starts again from the
/// committed state, taking the local change first (decision 0054).
package actor SyncEngine {
    /// What one round did.
    package struct RoundReport: Sendable, Equatable {
        package var pushed = 0
        package var applied = 0
        package var rejected: [String] = []
        /// Versions the server refused in this round, set aside as per-item problems.
        package var setAside = 0
        /// Items a full resync no longer listed, kept and reported (decision 0106).
        package var unlisted = 0
        /// Whether the round ended in step with the server.
        package var inStep = false
    }

    package let keychain: Keychain
    package let database: ClientStateDatabase
    package let transport: ZoneTransport
    package let sealer: VersionSealer
    private let logger: Logger
    private let configuration: ZoneSyncMachine.Configuration
    private var machine: ZoneSyncMachine
    private var committed: ZoneSyncState
    private var progress: ClientStateDatabase.ZoneProgress
    private var committedProgress: ClientStateDatabase.ZoneProgress
    private var problems: [(ItemID, String?)] = []
    /// The keychain effects decided since the last request, applied together before the next one.
    private var effects: [RemoteChange] = []
    /// The items whose records may differ from the committed state; nil: any may (a full resync).
    private var touched: Set<ItemID>? = []
    /// The contents decoded while opening the last page, so applying them does not decode again.
    private var decoded: [ItemID: (content: [UInt8], item: Item)] = [:]
    /// Items set aside for a refusal that may pass now, put back to be pushed: their problem is
    /// cleared once the server takes them.
    private var retried: Set<ItemID> = []
    /// The primary keys of items the keychain holds ahead of the committed state.
    private var aheadKeys: [ItemID: PrimaryKey] = [:]
    /// The clocks read at the start of the round: local changes are stamped within them (0108).
    private var timeBound: ModificationTimeBound?
    private var onProgress: (@Sendable (Int) -> Void)?
    private var beforeApply: (@Sendable () throws -> Void)?
    private var afterApply: (@Sendable () throws -> Void)?

    package init(
        keychain: Keychain, database: ClientStateDatabase, transport: ZoneTransport, sealer: VersionSealer, device: DeviceID,
        configuration: ZoneSyncMachine.Configuration = .client,
        logger: Logger
    ) throws(SyncClientError) {
        self.keychain = keychain
        self.database = database
        self.transport = transport
        self.sealer = sealer
        self.logger = logger
        self.configuration = configuration
        (committed, progress) = try database.loadZone(transport.zone, device: device, sealer: sealer)
        committedProgress = progress
        machine = ZoneSyncMachine(restoring: committed, configuration: configuration)
        retried = Set(machine.retrySetAside())
        touched?.formUnion(retried)
        aheadKeys = try Self.keychainAhead(of: committed, keychain: keychain, sealer: sealer)
        machine.markLocalValueUnknown(aheadKeys.keys)
    }

    /// The items the keychain took a version of that the committed state does not hold (a crash
    /// between the two commits), by item ID: their next pulled version is applied even when the
    /// state already shows its value (decision 0107).
    private static func keychainAhead(
        of committed: ZoneSyncState, keychain: Keychain, sealer: VersionSealer
    ) throws(SyncClientError) -> [ItemID: PrimaryKey] {
        let tags: [PrimaryKey: [UInt8]]
        do {
            tags = try keychain.remoteVersionTags(owner: committed.device.rawValue)
        } catch {
            throw Self.mapped(error)
        }
        var aheadKeys: [ItemID: PrimaryKey] = [:]
        for (key, tag) in tags {
            let item = sealer.itemID(of: key)
            // A state that has seen the tagged version (or more) holds what the keychain took.
            let seen = committed.records[item]?.seen ?? VersionVector()
            if let applied = try? VersionVector(canonicalEncoding: tag), seen.descends(from: applied) { continue }
            aheadKeys[item] = key
        }
        return aheadKeys
    }

    /// Reports the number of items applied so far in a round (for a progress indicator).
    package func setProgressHandler(_ handler: (@Sendable (Int) -> Void)?) { onProgress = handler }

    /// Calls `before` right before, and `after` right after, every keychain apply of pulled
    /// changes; an error thrown fails the round there. For tests: they land a local write inside
    /// the race window, or fail a round between the apply and the state commit (decision 0054).
    package func setApplyHooks(before: (@Sendable () throws -> Void)? = nil, after: (@Sendable () throws -> Void)? = nil) {
        beforeApply = before
        afterApply = after
    }

    /// The last journal sequence taken.
    package var journalPosition: Int64 { progress.journalSequence }

    /// Whether local changes are waiting to be pushed.
    package var hasPendingChanges: Bool { machine.hasPendingChanges }

    /// Runs rounds until the zone is in step with the server, at most `maximumRounds`.
    ///
    /// - Throws: ``SyncClientError`` `rejectedVersions` when some pulled versions were rejected,
    ///   `notInStep` when the rounds ran out, or the I/O error that stopped a round.
    @discardableResult
    package func syncUntilInStep(maximumRounds: Int = 100) async throws -> RoundReport {
        try await .summingRounds(maximumRounds: maximumRounds) { try await round() }
    }

    /// One round: take the journal's new changes, push, pull until the feed is drained, push
    /// resolutions. After a failure the machine restarts from the committed state.
    package func round() async throws -> RoundReport {
        do {
            timeBound = try await transport.modificationTimeBound()
            try ingestJournal()
            var report = RoundReport()
            // Never pushed and never pulled: the local items are reconciled before they are pushed.
            let fresh = machine.state.cursor == 0 && machine.state.nextBatchID == 1
            try await perform(machine.startSync(reconcilingFirst: fresh), report: &report)
            if report.inStep, try keychain.journalEntries(after: progress.journalSequence, limit: 1).isEmpty == false {
                report.inStep = false
            }
            return report
        } catch is LocalChangeRace {
            // A local write beat the page to the keychain: start again from the committed state;
            // the next round takes the write from the journal before it pulls the page again.
            restoreCommitted()
            return RoundReport()
        } catch {
            restoreCommitted()
            throw Self.mapped(error)
        }
    }

    private func restoreCommitted() {
        machine = ZoneSyncMachine(restoring: committed, configuration: configuration)
        progress = committedProgress
        problems.removeAll()
        effects.removeAll()
        retried = Set(machine.retrySetAside())
        touched = retried
        // Unreadable now: the keys found at the start stand.
        if let ahead = try? Self.keychainAhead(of: committed, keychain: keychain, sealer: sealer) { aheadKeys = ahead }
        machine.markLocalValueUnknown(aheadKeys.keys)
    }

    /// The items whose local versions are set aside, unpushed, because the server will not take
    /// them (each is a problem in `status`).
    package var setAside: [ItemID: ItemRefusal] { machine.state.records.compactMapValues(\.refusal) }

    // MARK: - Local changes

    /// Turns the journal's entries after the consumed position into local changes, then commits.
    /// Without any sync state (a new device, re-enrolment, a lost state file), first every
    /// synchronizable item of the keychain: the journal does not hold the items that were pulled
    /// (decision 0106).
    package func ingestJournal() throws(SyncClientError) {
        if committed.cursor == 0, committed.records.isEmpty, progress.journalSequence == 0 {
            let items: [(key: PrimaryKey, attributes: ItemAttributes)]
            do {
                items = try keychain.synchronizableItems()
            } catch {
                throw Self.mapped(error)
            }
            for item in items {
                try localChange(of: item.key, at: item.attributes.modificationDate ?? Date())
            }
            if !items.isEmpty { try commit() }
        }
        while true {
            let entries: [JournalEntry]
            do {
                entries = try keychain.journalEntries(after: progress.journalSequence, limit: 1000)
            } catch {
                throw Self.mapped(error)
            }
            guard let last = entries.last else { return }
            var latest: [PrimaryKey: JournalEntry] = [:]
            var order: [PrimaryKey] = []
            for entry in entries where entry.primaryKey.isSynchronizable {
                if latest.updateValue(entry, forKey: entry.primaryKey) == nil { order.append(entry.primaryKey) }
            }
            for key in order {
                guard let entry = latest[key] else { continue }
                try localChange(of: entry.primaryKey, at: entry.time)
            }
            progress.journalSequence = last.sequence
            try commit()
        }
    }

    private func localChange(of primaryKey: PrimaryKey, at time: Date) throws(SyncClientError) {
        let current: Item?
        do {
            current = try keychain.item(withPrimaryKey: primaryKey)
        } catch {
            throw Self.mapped(error)
        }
        let item = itemID(of: primaryKey)
        let basedOn = try appliedVersion(of: primaryKey)
        guard let current, current.isSynchronizable else {
            touched?.insert(item)
            _ = machine.localChange(LocalChange(item: item, scope: .synchronizable, content: nil, modifiedAt: milliseconds(time), basedOn: basedOn))
            return
        }
        let content = ItemContent.encode(current)
        if let record = machine.state.records[item], !record.version.isDeleted, record.version.content == content { return }
        let scope: LocalChange.Scope = current.accessibility.isThisDeviceOnly ? .thisDeviceOnly : .synchronizable
        let modified = current.attributes.modificationDate ?? time
        touched?.insert(item)
        let wasSetAside = machine.state.records[item]?.refusal != nil
        _ = machine.localChange(LocalChange(item: item, scope: scope, content: content, modifiedAt: milliseconds(modified), basedOn: basedOn))
        // Refused up front: the server takes no blob over its limit, so pushing it would only
        // fail (decision 0105).
        if let version = machine.state.records[item]?.version, version.content == content {
            let length = sealer.sealedLength(of: version)
            if length > VersionSealer.serverBlobLimit {
                machine.setAside(item, because: .tooLarge)
                problems.append((item, "too large to sync: it seals to \(length) bytes and the server takes at most \(VersionSealer.serverBlobLimit)"))
            } else if wasSetAside {
                problems.append((item, nil))
            }
        }
    }

    /// The version this engine's last apply left `primaryKey` at, as the keychain recorded it in
    /// that apply's transaction: ahead of the committed state after a crash between the two
    /// commits (decision 0107). Empty when this enrolment never applied the item.
    private func appliedVersion(of primaryKey: PrimaryKey) throws(SyncClientError) -> VersionVector {
        let tag: [UInt8]?
        do {
            tag = try keychain.remoteVersionTag(of: primaryKey, owner: machine.state.device.rawValue)
        } catch {
            throw Self.mapped(error)
        }
        return tag.flatMap { try? VersionVector(canonicalEncoding: $0) } ?? VersionVector()
    }

    // MARK: - Actions

    private func perform(_ initial: [SyncAction], report: inout RoundReport) async throws {
        var actions = initial[...]
        while let action = actions.popFirst() {
            switch action {
            case .push(let batch):
                try applyEffects()
                try commit()
                let response = try await transport.push(try sealer.seal(batch))
                if response.status == .committed { report.pushed += batch.items.count }
                touched?.formUnion(batch.items.map(\.item))
                actions.append(contentsOf: machine.receive(response))
                noteRefusals(of: batch, response: response, report: &report)
            case .pull(let request):
                // A pull changes nothing on the server, so it goes out while the previous page is
                // applied and committed; its answer is only taken after that commit.
                async let fetched = transport.pull(request)
                try applyEffects()
                try commit()
                let page = try await fetched
                let opened = open(page, report: &report)
                if request.isFullResync {
                    touched = nil
                } else if case .changes(_, let items, _, _) = opened {
                    touched?.formUnion(items.map(\.item))
                }
                actions.append(contentsOf: machine.receive(opened))
            case .store(let item, let version):
                try store(version, item: item)
                report.applied += 1
                if report.applied % 500 == 0 { onProgress?(report.applied) }
            case .remove(let item):
                // The state was committed right before the request whose answer removed it.
                if let old = committed.records[item]?.version, let removed = ItemContent.decode(old.content) {
                    effects.append(.delete(removed.primaryKey))
                } else if let key = aheadKeys[item] {
                    effects.append(.delete(key))
                }
                problems.append((item, nil))
                report.applied += 1
            case .keepInHistory(let item, let version):
                if let loser = ItemContent.decode(version.content) {
                    effects.append(.keepInHistory(loser, versionTag: version.vector.canonicalEncoding))
                } else {
                    reject(item, "a losing version's content cannot be read", report: &report)
                }
            case .unlisted(let item):
                logger.warning("a full resync did not list an item; kept", metadata: ["item": "\(item)"])
                problems.append((item, Self.unlistedProblem))
                report.unlisted += 1
            case .reject(let item, let rejection):
                let reason = rejection == .vectorWentBackwards
                    ? "its version vector goes backwards" : "it claims a write of this device that this device never made"
                reject(item, reason, report: &report)
            case .synced:
                try applyEffects()
                progress.lastSync = Date()
                try commit()
                try await transport.acknowledge(machine.state.cursor)
                report.inStep = true
            }
        }
        if !effects.isEmpty {
            // The round stopped after a page without a further request (pushes ran out).
            try applyEffects()
            try commit()
        }
    }

    private func store(_ version: ItemVersion, item: ItemID) throws {
        let cached = decoded[item].flatMap { $0.content == version.content ? $0.item : nil }
        guard let remote = cached ?? ItemContent.decode(version.content), remote.isSynchronizable, !remote.accessibility.isThisDeviceOnly else {
            logger.warning("pulled item content cannot be applied", metadata: ["item": "\(item)"])
            problems.append((item, "its content is not a synchronizable keychain item"))
            return
        }
        effects.append(.store(remote))
        problems.append((item, nil))
    }

    /// Opens every version of a page; an item with a version that fails to open, or whose
    /// content is not the item its ID names, is left out of the page and reported.
    private func open(_ page: PullResponse<SealedVersion>, report: inout RoundReport) -> PullResponse<ItemVersion> {
        guard case .changes(let requestID, let items, let nextCursor, let hasMore) = page else {
            return page.versionless() ?? .cursorExpired(requestID: page.requestID)
        }
        var opened: [SyncCore.ChangedItem<ItemVersion>] = []
        opened.reserveCapacity(items.count)
        decoded.removeAll(keepingCapacity: true)
        for changed in items {
            do {
                let versions = try changed.versions.map { sealed in
                    let version = try sealer.open(sealed.payload, item: changed.item, vector: sealed.vector, deleted: sealed.isDeleted)
                    if !version.isDeleted {
                        guard let content = ItemContent.decode(version.content), itemID(of: content.primaryKey) == changed.item else {
                            throw SyncClientError(.rejectedVersions, "content does not match its item ID")
                        }
                        decoded[changed.item] = (version.content, content)
                    }
                    return version
                }
                opened.append(.init(item: changed.item, sequence: changed.sequence, versions: versions))
            } catch {
                reject(changed.item, "a version failed to open (wrong key or tampered)", report: &report)
            }
        }
        return .changes(requestID: requestID, items: opened, nextCursor: nextCursor, hasMore: hasMore)
    }

    /// Records a problem for every item of `batch` the server's answer set aside, and clears the
    /// problem of every item it accepted.
    private func noteRefusals(of batch: PushBatch<ItemVersion>, response: PushResponse, report: inout RoundReport) {
        for pushed in batch.items {
            if let refusal = machine.state.records[pushed.item]?.refusal, response.refused?.items.contains(pushed.item) == true {
                logger.warning("pushed version refused; set aside", metadata: ["item": "\(pushed.item)", "reason": "\(refusal)"])
                problems.append((pushed.item, refusal.explanation))
                report.setAside += 1
            } else if response.status == .committed, retried.remove(pushed.item) != nil {
                problems.append((pushed.item, nil))
            }
        }
    }

    private func reject(_ item: ItemID, _ reason: String, report: inout RoundReport) {
        logger.warning("pulled version rejected", metadata: ["item": "\(item)", "reason": "\(reason)"])
        problems.append((item, reason))
        report.rejected.append("item \(item.rawValue.prefix(12))…: \(reason)")
    }

    // MARK: - Durability

    /// Applies the effects decided so far in one keychain transaction, unless an item they touch
    /// changed locally after the journal position the machine decided with.
    private func applyEffects() throws {
        guard !effects.isEmpty else { return }
        try beforeApply?()
        let outcome: RemoteApplyOutcome
        do {
            outcome = try keychain.applyRemote(effects, basedOnJournal: progress.journalSequence, versions: appliedVersions())
        } catch {
            throw Self.mapped(error)
        }
        effects.removeAll()
        if case .changedLocally(let keys) = outcome {
            logger.info("a local change raced the pulled versions; syncing again", metadata: ["items": "\(keys.count)"])
            throw LocalChangeRace()
        }
        try afterApply?()
    }

    /// The version each item the effects write is at in the machine's state, committed right after
    /// them: recorded by the keychain in the apply's own transaction (decision 0107).
    private func appliedVersions() -> RemoteVersionTags {
        var tags: [PrimaryKey: [UInt8]] = [:]
        for effect in effects {
            let key: PrimaryKey
            switch effect {
            case .store(let item): key = item.primaryKey
            case .delete(let primaryKey): key = primaryKey
            case .keepInHistory: continue
            }
            if let seen = machine.state.records[itemID(of: key)]?.seen { tags[key] = seen.canonicalEncoding }
        }
        return RemoteVersionTags(owner: machine.state.device.rawValue, tags: tags)
    }

    /// Thrown when ``applyEffects()`` found a local change it must not overwrite.
    private struct LocalChangeRace: Error {}

    private func commit() throws(SyncClientError) {
        try database.saveZone(machine.state, previous: committed, changed: touched, progress: progress, sealer: sealer, problems: problems)
        touched = []
        committed = machine.state
        committedProgress = progress
        problems.removeAll()
    }

    // MARK: - Helpers

    package func itemID(of primaryKey: PrimaryKey) -> ItemID { sealer.itemID(of: primaryKey) }

    /// A local change's stamp: its time on this device's clock, bounded by the server's (0108).
    private func milliseconds(_ date: Date) -> Int64 {
        let local = ZoneTransport.milliseconds(date)
        return timeBound?.bounded(local) ?? local
    }

    /// The problem of an item a full resync did not list (absence is not deletion, decision 0106).
    static let unlistedProblem = "the server no longer lists it (deleted on another device and collected, or lost by the server): kept here, not pushed; delete or change it to settle"

    static func mapped(_ error: any Error) -> SyncClientError {
        if let error = error as? SyncClientError { return error }
        if let error = error as? KeychainError {
            if error.code == .interactionNotAllowed {
                return SyncClientError(.keychainLocked, "the keychain is locked; unlock it to sync", underlying: error)
            }
            return SyncClientError(.localStorage, "keychain: \(error.message)", underlying: error)
        }
        if let error = error as? CryptoError {
            return SyncClientError(.localStorage, "crypto: \(error.message)", underlying: error)
        }
        return SyncClientError(.unreachable, "sync failed", underlying: error)
    }
}

extension SyncEngine {
    /// Whether the keychain's journal has entries this engine has not taken yet.
    package func hasNewJournalEntries() -> Bool {
        (try? keychain.journalEntries(after: journalPosition, limit: 1).isEmpty == false) ?? true
    }
}

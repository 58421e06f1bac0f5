import Foundation
import KeychainCrypto
import KeyValueStore
import Logging
import SyncCore

/// Drives SyncCore's ``ZoneSyncMachine`` for a zone whose local side is a ``ZoneMirror`` (a
/// key-value store, or the directory of stores), through the same server endpoints, item IDs,
/// sealing and state file as the keychain zone (decisions 0052, 0070).
///
/// Durability: before the machine's state is committed (before every request and at the end of
/// a round), the mirror is brought up to date with every record that changed since the last
/// commit; mirroring is idempotent, so a crash in between replays it.
package actor MirroredZoneEngine<Mirror: ZoneMirror> {
    package let zone: ZoneID
    private var mirror: Mirror
    private let database: ClientStateDatabase
    private let transport: ZoneTransport
    private let sealer: VersionSealer
    private let logger: Logger
    private let configuration: ZoneSyncMachine.Configuration
    private var machine: ZoneSyncMachine
    private var committed: ZoneSyncState
    private var progress: ClientStateDatabase.ZoneProgress
    private var committedProgress: ClientStateDatabase.ZoneProgress
    private var problems: [(ItemID, String?)] = []
    /// Whether the round in progress is the zone's first (its events are "initial sync").
    private var initial = false

    package init(
        mirror: Mirror, database: ClientStateDatabase, transport: ZoneTransport, sealer: VersionSealer, device: DeviceID,
        configuration: ZoneSyncMachine.Configuration = .client,
        logger: Logger
    ) throws(SyncClientError) {
        zone = transport.zone
        self.mirror = mirror
        self.database = database
        self.transport = transport
        self.sealer = sealer
        self.logger = logger
        self.configuration = configuration
        (committed, progress) = try database.loadZone(transport.zone, device: device, sealer: sealer)
        committedProgress = progress
        machine = ZoneSyncMachine(restoring: committed, configuration: configuration)
        machine.retrySetAside()
    }

    /// The machine's records (what the zone holds as far as this device knows).
    package var records: [ItemID: ZoneSyncState.Record] { machine.state.records }

    /// Runs rounds until the zone is in step with the server, at most `maximumRounds`.
    /// - Throws: ``SyncClientError`` as ``SyncEngine/syncUntilInStep(maximumRounds:)`` does.
    @discardableResult
    package func syncUntilInStep(maximumRounds: Int = 100) async throws -> SyncEngine.RoundReport {
        try await .summingRounds(maximumRounds: maximumRounds, subject: "zone \(zone): ") { try await round() }
    }

    /// One round: take the local changes, push, pull until the feed is drained, push resolutions.
    /// After a failure the machine restarts from the committed state.
    package func round() async throws -> SyncEngine.RoundReport {
        do {
            initial = committed.cursor == 0
            let timeBound = try await transport.modificationTimeBound()
            while let position = try mirror.takeLocalChanges(after: progress.journalSequence, into: &machine, timeBound: timeBound) {
                progress.journalSequence = position
                try commit()
            }
            var report = SyncEngine.RoundReport()
            try await perform(machine.startSync(), report: &report)
            if report.inStep, try mirror.hasLocalChanges(after: progress.journalSequence, state: machine.state) { report.inStep = false }
            return report
        } catch {
            machine = ZoneSyncMachine(restoring: committed, configuration: configuration)
            machine.retrySetAside()
            progress = committedProgress
            problems.removeAll()
            throw Self.mapped(error)
        }
    }

    private func perform(_ initialActions: [SyncAction], report: inout SyncEngine.RoundReport) async throws {
        var actions = initialActions[...]
        while let action = actions.popFirst() {
            switch action {
            case .push(let batch):
                try commit()
                let response = try await transport.push(try sealer.seal(batch))
                if response.status == .committed { report.pushed += batch.items.count }
                actions.append(contentsOf: machine.receive(response))
            case .pull(let request):
                try commit()
                let page = try await transport.pull(request)
                actions.append(contentsOf: machine.receive(open(page, report: &report)))
            case .store, .remove:
                // Mirrored from the changed records at the next commit.
                report.applied += 1
            case .keepInHistory:
                // A losing value is not kept: key-value stores have no history (as Apple's).
                continue
            case .unlisted(let item):
                problems.append((item, SyncEngine.unlistedProblem))
                report.unlisted += 1
            case .reject(let item, let rejection):
                let reason = rejection == .vectorWentBackwards
                    ? "its version vector goes backwards" : "it claims a write of this device that this device never made"
                reject(item, reason, report: &report)
            case .synced:
                progress.lastSync = Date()
                try commit()
                try await transport.acknowledge(machine.state.cursor)
                report.inStep = true
            }
        }
    }

    /// Opens every version of a page; an item with a version that fails to open, or whose content
    /// is not the item its ID names, is left out of the page and reported.
    private func open(_ page: PullResponse<SealedVersion>, report: inout SyncEngine.RoundReport) -> PullResponse<ItemVersion> {
        guard case .changes(let requestID, let items, let nextCursor, let hasMore) = page else {
            return page.versionless() ?? .cursorExpired(requestID: page.requestID)
        }
        var opened: [SyncCore.ChangedItem<ItemVersion>] = []
        opened.reserveCapacity(items.count)
        for changed in items {
            do {
                let versions = try changed.versions.map { sealed in
                    let version = try sealer.open(sealed.payload, item: changed.item, vector: sealed.vector, deleted: sealed.isDeleted)
                    if !version.isDeleted, !mirror.accepts(version.content, for: changed.item) {
                        throw SyncClientError(.rejectedVersions, "content does not match its item ID")
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

    private func reject(_ item: ItemID, _ reason: String, report: inout SyncEngine.RoundReport) {
        logger.warning("pulled version rejected", metadata: ["zone": "\(zone)", "item": "\(item)", "reason": "\(reason)"])
        problems.append((item, reason))
        report.rejected.append("item \(item.rawValue.prefix(12))…: \(reason)")
    }

    /// Mirrors every record that changed since the last commit, then commits the machine's state.
    private func commit() throws {
        // Nothing to write (a round with no change): no transaction, no fsync.
        guard machine.state != committed || progress != committedProgress || !problems.isEmpty else { return }
        let records = machine.state.records
        for (item, record) in records where committed.records[item] != record {
            try mirror.mirror(record, of: item, previous: committed.records[item], initial: initial, position: progress.journalSequence)
            if !record.isPending {
                problems.append((item, nil))
            } else if let refusal = record.refusal {
                problems.append((item, refusal.explanation))
            }
        }
        for (item, previous) in committed.records where records[item] == nil {
            try mirror.mirror(nil, of: item, previous: previous, initial: initial, position: progress.journalSequence)
        }
        try database.saveZone(machine.state, previous: committed, progress: progress, sealer: sealer, problems: problems)
        committed = machine.state
        committedProgress = progress
        problems.removeAll()
    }

    static func mapped(_ error: any Error) -> SyncClientError {
        if let error = error as? KeyValueStoreError {
            return SyncClientError(.localStorage, "key-value store: \(error.message)", underlying: error)
        }
        return SyncEngine.mapped(error)
    }
}

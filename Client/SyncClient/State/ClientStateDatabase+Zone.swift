import DurableSQLite
import Foundation
import GRDB
import KeychainCrypto
import SyncCore
import SyncProtocol

extension ClientStateDatabase {
    /// Forgets this device's sync state of `zones` (a shared group the account is out of,
    /// decision 0299): their records, problems, held arrivals and excused writes go, and each
    /// zone starts again from the feed's beginning. What numbers its own writes and batches stays,
    /// so the versions and batches it made before are still known as its own if it syncs the
    /// zone again; so do its statements about the zones, which later ones continue.
    package func forgetZones(_ zones: [ZoneID]) throws(SyncClientError) {
        try write { db in
            for zone in zones.map(\.rawValue) {
                let counters = try Row.fetchOne(db, sql: "SELECT write_counter, next_batch_id, epoch FROM zone_state WHERE zone = ?", arguments: [zone])
                for table in ["zone_state", "item_record", "problem", "held_arrival", "excused_writes"] {
                    try db.execute(sql: "DELETE FROM \(table) WHERE zone = ?", arguments: [zone])
                }
                guard let counters else { continue }
                try db.execute(
                    sql: "INSERT INTO zone_state (zone, cursor, write_counter, next_batch_id, epoch, journal_sequence) VALUES (?, 0, ?, ?, ?, 0)",
                    arguments: [zone, counters[0] as Int64, counters[1] as Int64, (counters[2] as Int64) + 1])
            }
        }
    }

    /// The sequence numbers the server reported (decision 0188): per zone the account's latest,
    /// per item the highest it was given or listed at. 0 in a state file from before: nothing
    /// known, nothing refused until the server reports them again.
    static func registerSequenceMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v4-sequences") { db in
            try db.execute(sql: """
                ALTER TABLE zone_state ADD COLUMN latest_sequence INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE item_record ADD COLUMN sequence INTEGER NOT NULL DEFAULT 0;
                """)
        }
    }

    /// Which of a record's baseline versions are deletions (decision 0203); NULL in records
    /// written before, read as none.
    static func registerDeletedBaselineMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v5-deleted-baseline") { db in
            try db.execute(sql: "ALTER TABLE item_record ADD COLUMN deleted_baseline BLOB")
        }
    }

    /// When a zone's local changes were last all taken, on the server's clock (rule R17); NULL:
    /// not known.
    static func registerChangesTakenMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v10-changes-taken-at") { db in
            try db.execute(sql: "ALTER TABLE zone_state ADD COLUMN changes_taken_at INTEGER")
        }
    }

    static func registerAppliesCoveredMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v12-applies-covered") { db in
            try db.execute(sql: "ALTER TABLE zone_state ADD COLUMN applies_covered INTEGER")
        }
    }

    static func registerMayBeOnServerMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v6-may-be-on-server") { db in
            // A pending version the server may hold unacknowledged (decision 0233).
            try db.execute(sql: "ALTER TABLE item_record ADD COLUMN may_be_on_server INTEGER NOT NULL DEFAULT 0")
        }
    }

    /// What is durably kept per zone besides the machine's state.
    package struct ZoneProgress: Sendable, Equatable {
        /// The last keychain journal entry turned into local changes.
        package var journalSequence: Int64 = 0
        /// When the zone was last in step with the server.
        package var lastSync: Date?
        /// The server's time (milliseconds) when every local change there was had been taken: a
        /// change taken later was made after it (``ModificationTimeBound/changesTakenBefore``).
        package var changesTakenAt: Int64?
        /// The local store's count of applies the state holds every version of
        /// (``ZoneLocalStore/coveredApplies(by:)``); nil when not known.
        package var appliesCovered: Int64?

        /// Nothing taken, never in step.
        package init() {}
    }

    private struct StoredBatch: Decodable {
        struct Entry: Decodable {
            var item: ItemID
            var vector: VersionVector
            var deleted: Bool
            /// Base64 in the JSON: an array of numbers (what earlier builds wrote, still read)
            /// cost a tenth of a first push's CPU to encode (decision 0198). Absent when the
            /// version is the item's record's, committed with it: sealing and storing every
            /// version twice cost a first push a fifteenth of its CPU and a sixth of its writes.
            var sealed: [UInt8]?

            enum CodingKeys: String, CodingKey { case item, vector, deleted, sealed }

            init(item: ItemID, vector: VersionVector, deleted: Bool, sealed: [UInt8]?) {
                self.item = item
                self.vector = vector
                self.deleted = deleted
                self.sealed = sealed
            }

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                item = try container.decode(ItemID.self, forKey: .item)
                vector = try container.decode(VersionVector.self, forKey: .vector)
                deleted = try container.decode(Bool.self, forKey: .deleted)
                if !container.contains(.sealed) {
                    sealed = nil
                } else if let base64 = try? container.decode(Data.self, forKey: .sealed) {
                    sealed = Array(base64)
                } else {
                    sealed = try container.decode([UInt8].self, forKey: .sealed)
                }
            }
        }

        var batchID: UInt64
        var cursor: UInt64
        var items: [Entry]

        /// The JSON `JSONEncoder` makes of the batch (slashes left unescaped), written directly:
        /// the encoder cost a first push 3 % of its CPU, once a batch (issue 35).
        var json: [UInt8] {
            var json = WireJSONWriter()
            json.bytes.reserveCapacity(64 + items.count * 120)
            json.raw("{\"batchID\":\(batchID),\"cursor\":\(cursor),\"items\":")
            json.list("[", "]", items) { json, entry in
                json.raw("{\"deleted\":\(entry.deleted),\"item\":")
                json.string(entry.item.rawValue)
                if let sealed = entry.sealed {
                    json.raw(",\"sealed\":")
                    json.base64(sealed)
                }
                json.raw(",\"vector\":")
                json.vector(entry.vector)
                json.raw("}")
            }
            json.raw("}")
            return json.bytes
        }
    }

    /// Loads a zone's state; a fresh state for a zone never synced.
    /// Every zone this device has a sync state for, the keychain's first.
    package func syncedZones() throws(SyncClientError) -> [ZoneID] {
        let names = try read { db in try String.fetchAll(db, sql: "SELECT DISTINCT zone FROM zone_state ORDER BY zone") }
        return [ZoneID.keychain] + names.map(ZoneID.init).filter { $0 != .keychain }
    }

    package func loadZone(_ zone: ZoneID, device: DeviceID, sealer: VersionSealer) throws(SyncClientError) -> (ZoneSyncState, ZoneProgress) {
        var unlayered: Set<ItemID> = []
        return try loadZone(zone, device: device, sealer: sealer, unlayered: &unlayered)
    }

    /// Loads a zone's state; a fresh state for a zone never synced. A copy whose class is locked
    /// away keeps its content sealed (``VersionSealer/isSealedAway(_:)``, decision 0237).
    /// - Parameter unlayered: Set to the items whose copies (record or unanswered batch entry)
    ///   lack the class layer they need: written before 0237, sealed again by the next commit.
    package func loadZone(
        _ zone: ZoneID, device: DeviceID, sealer: VersionSealer, unlayered: inout Set<ItemID>
    ) throws(SyncClientError) -> (ZoneSyncState, ZoneProgress) {
        let classKeys = try sealer.stateClassKeys()
        var found: Set<ItemID> = []
        defer { unlayered = found }
        return try read { db in
            var state = ZoneSyncState(device: device, zone: zone)
            var progress = ZoneProgress()
            var batch: StoredBatch?
            if let row = try Row.fetchOne(
                db, sql: "SELECT \(Self.headColumns), unanswered_batch FROM zone_state WHERE zone = ?", arguments: [zone.rawValue])
            {
                Self.readHead(row, into: &state, progress: &progress)
                if let data = row[Self.headColumnCount] as Data? { batch = try JSONDecoder().decode(StoredBatch.self, from: data) }
            }
            let rows = try Row.fetchCursor(
                db, sql: "SELECT item, vector, deleted, sealed, pending, baseline, seen, refusal, sequence, deleted_baseline, may_be_on_server FROM item_record WHERE zone = ?",
                arguments: [zone.rawValue])
            while let row = try rows.next() {
                let item = ItemID(row[0])
                let vector = try StoredVectors.vector(row[1])
                var layered = true
                let version = try sealer.openFromState(
                    Array(row[3] as Data), item: item, vector: vector, deleted: row[2], classKeys: classKeys, layered: &layered)
                if !layered { found.insert(item) }
                state.records[item] = ZoneSyncState.Record(
                    version: version, isPending: row[4],
                    baseline: try StoredVectors.vectors(row[5]), seen: try StoredVectors.vector(row[6]),
                    refusal: (row[7] as String?).flatMap(ItemRefusal.init(rawValue:)), sequence: UInt64(clamping: row[8] as Int64),
                    deletedBaseline: (row[9] as DatabaseValue).isNull ? [] : try StoredVectors.vectors(row[9]), mayBeOnServer: row[10])
            }
            if let batch {
                let items = try batch.items.map { (entry) throws(SyncClientError) in
                    guard let sealed = entry.sealed else {
                        guard let version = state.records[entry.item]?.version, version.vector == entry.vector, version.isDeleted == entry.deleted else {
                            throw SyncClientError(.localStorage, "the unanswered batch names a version the sync state does not hold")
                        }
                        return PushedItem(item: entry.item, version: version)
                    }
                    var layered = true
                    let version = try sealer.openFromState(
                        sealed, item: entry.item, vector: entry.vector, deleted: entry.deleted, classKeys: classKeys, layered: &layered)
                    if !layered { found.insert(entry.item) }
                    return PushedItem(item: entry.item, version: version)
                }
                state.unansweredBatch = PushBatch(device: device, zone: zone, batchID: batch.batchID, cursor: batch.cursor, items: items)
            }
            return (state, progress)
        }
    }

    /// Commits a zone's state in one transaction, writing only the records that differ from
    /// `previous` (the state last committed). A record whose version is unchanged is updated
    /// without sealing its copy again, and the unanswered batch is written only when it changed:
    /// so a commit while the keychain is locked never has to seal a "when unlocked" copy it did not
    /// change (decision 0237), and an acknowledgement costs no sealing.
    /// - Parameters:
    ///   - changed: The only items whose records may differ from `previous`, so the others are not
    ///     compared; nil to compare every record.
    ///   - resealing: Items whose copies are sealed again even if unchanged (they lack the class
    ///     layer, ``loadZone(_:device:sealer:unlayered:)``); with any, the batch is written again.
    ///   - held: Arrivals to hold or release (decision 0137), in order.
    ///   - view: The view of `state`'s records, when the caller knows it: kept for a start that
    ///     loads no record (``loadZoneHead(_:device:needsView:)``). Without it, a commit that writes
    ///     a record forgets the view kept.
    package func saveZone(
        _ state: ZoneSyncState, previous: ZoneSyncState?, changed: Set<ItemID>? = nil, resealing: Set<ItemID> = [],
        progress: ZoneProgress, sealer: VersionSealer, problems: [(ItemID, String?)] = [], held: [HeldChange] = [],
        view: ZoneStateView? = nil
    ) throws(SyncClientError) {
        let classKeys = try sealer.stateClassKeys()
        // In item order, the order batches take them in: a new record's row lands beside the
        // rows of the items pushed with it, so a batch's answer rewrites a few pages, not most.
        let candidates: [ItemID] = (changed.map { $0.union(resealing) }
            ?? Set(state.records.keys).union(previous.map { Array($0.records.keys) } ?? [])).sorted()
        assert(changed == nil || Self.differing(state, previous).isSubset(of: changed!), "a changed record was not reported")
        let sealedCopies = try Self.sealedCopies(state, previous: previous, candidates: candidates, resealing: resealing, sealer: sealer, classKeys: classKeys)
        try write { db in
            try db.executeCached(
                sql: """
                    INSERT INTO zone_state
                        (zone, cursor, write_counter, next_batch_id, epoch, journal_sequence, last_sync, latest_sequence, changes_taken_at,
                         applies_covered)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (zone) DO UPDATE SET
                        cursor = excluded.cursor, write_counter = excluded.write_counter, next_batch_id = excluded.next_batch_id,
                        epoch = excluded.epoch, journal_sequence = excluded.journal_sequence, last_sync = excluded.last_sync,
                        latest_sequence = excluded.latest_sequence, changes_taken_at = excluded.changes_taken_at,
                        applies_covered = excluded.applies_covered
                    """,
                arguments: [
                    state.zone.rawValue, Int64(state.cursor), Int64(state.writeCounter), Int64(state.nextBatchID), Int64(state.epoch),
                    progress.journalSequence, progress.lastSync?.timeIntervalSince1970, Int64(clamping: state.latestSequence),
                    progress.changesTakenAt, progress.appliesCovered,
                ])
            let upsert = try db.cachedStatement(sql: """
                INSERT OR REPLACE INTO item_record
                    (zone, item, vector, deleted, sealed, pending, baseline, seen, refusal, sequence, deleted_baseline, may_be_on_server)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            let update = try db.cachedStatement(sql: """
                UPDATE item_record SET pending = ?, baseline = ?, seen = ?, refusal = ?, sequence = ?, deleted_baseline = ?, may_be_on_server = ?
                WHERE zone = ? AND item = ?
                """)
            let delete = try db.cachedStatement(sql: "DELETE FROM item_record WHERE zone = ? AND item = ?")
            var wroteRecords = previous == nil
            // A batch entry may name its record's version (``StoredBatch/Entry/sealed``): a record
            // whose version changes or goes writes the batch again.
            let batchItems = Set(previous?.unansweredBatch?.items.map(\.item) ?? [])
            var batchNamesChanged = false
            for item in candidates {
                let old = previous?.records[item]
                guard let record = state.records[item] else {
                    if old != nil {
                        try delete.execute(arguments: [state.zone.rawValue, item.rawValue])
                        wroteRecords = true
                        batchNamesChanged = batchNamesChanged || batchItems.contains(item)
                    }
                    continue
                }
                // A record with a copy sealed is written whole; any other that changed, in place.
                let copy = sealedCopies[item]
                guard old != record || copy != nil else { continue }
                wroteRecords = true
                guard let copy else {
                    try update.execute(arguments: [
                        record.isPending, StoredVectors.encode(record.baseline), StoredVectors.encode(record.seen), record.refusal?.rawValue,
                        Int64(clamping: record.sequence), StoredVectors.encode(record.deletedBaseline), record.mayBeOnServer,
                        state.zone.rawValue, item.rawValue,
                    ])
                    continue
                }
                batchNamesChanged = batchNamesChanged || batchItems.contains(item)
                try upsert.execute(arguments: [
                    state.zone.rawValue, item.rawValue, StoredVectors.encode(record.version.vector), record.version.isDeleted,
                    Data(copy), record.isPending,
                    StoredVectors.encode(record.baseline), StoredVectors.encode(record.seen), record.refusal?.rawValue,
                    Int64(clamping: record.sequence), StoredVectors.encode(record.deletedBaseline), record.mayBeOnServer,
                ])
            }
            if previous == nil || state.unansweredBatch != previous?.unansweredBatch || !resealing.isEmpty || batchNamesChanged {
                try db.executeCached(
                    sql: "UPDATE zone_state SET unanswered_batch = ? WHERE zone = ?",
                    arguments: [try Self.encoded(state.unansweredBatch, records: state.records, sealer: sealer, classKeys: classKeys), state.zone.rawValue])
            }
            if view != nil || wroteRecords { try Self.recordView(db, zone: state.zone, view, epoch: state.epoch) }
            try recordHeld(db, zone: state.zone, held, sealed: sealer.classLayer != nil)
            // The last word on each item counts: an item applied and then rejected in one round,
            // or cleared by several steps, is written once.
            let last = Dictionary(problems.enumerated().map { ($0.element.0, $0.offset) }) { _, later in later }
            // Most clears are of items that have no problem (every item a page or a push answer
            // took): with many, the zone's problems are read once and only theirs are deleted.
            let withProblems = problems.count > 64 ? try Set(String.fetchAll(
                db, sql: "SELECT item FROM problem WHERE zone = ?", arguments: [state.zone.rawValue])) : nil
            for (index, (item, reason)) in problems.enumerated() where last[item] == index {
                if let reason {
                    try recordProblem(db, zone: state.zone, item: item, reason: reason)
                } else if withProblems?.contains(item.rawValue) ?? true {
                    try clearProblem(db, zone: state.zone, item: item)
                }
            }
        }
    }
}

extension ClientStateDatabase {
    /// The unanswered batch as the state keeps it: JSON, each version sealed for the state file
    /// unless it is its item's record's, committed in the same transaction.
    private static func encoded(
        _ batch: PushBatch<ItemVersion>?, records: [ItemID: ZoneSyncState.Record], sealer: VersionSealer, classKeys: StateClassLayer.Keys?
    ) throws(SyncClientError) -> Data? {
        guard let batch else { return nil }
        let entries = try batch.items.map { (pushed) throws(SyncClientError) in
            StoredBatch.Entry(
                item: pushed.item, vector: pushed.version.vector, deleted: pushed.version.isDeleted,
                sealed: records[pushed.item]?.version == pushed.version
                    ? nil : try sealer.sealForState(pushed.version, item: pushed.item, classKeys: classKeys))
        }
        return Data(StoredBatch(batchID: batch.batchID, cursor: batch.cursor, items: entries).json)
    }

    /// The copies of the versions a commit writes anew (a record whose version changed, or one
    /// sealed again), sealed for the state file before its transaction, on every core when there
    /// are many: a first push's commits seal 10,000 (issue 35). Their records are the ones the
    /// commit writes whole.
    private static func sealedCopies(
        _ state: ZoneSyncState, previous: ZoneSyncState?, candidates: [ItemID], resealing: Set<ItemID>, sealer: VersionSealer,
        classKeys: StateClassLayer.Keys?
    ) throws(SyncClientError) -> [ItemID: [UInt8]] {
        let written = candidates.compactMap { item in
            state.records[item].flatMap { record in
                resealing.contains(item) || previous?.records[item]?.version != record.version ? (item, record.version) : nil
            }
        }
        let sealed = ParallelWork.results(written.count) { index in
            Result { () throws(SyncClientError) in try sealer.sealForState(written[index].1, item: written[index].0, classKeys: classKeys) }
        }
        var copies: [ItemID: [UInt8]] = [:]
        copies.reserveCapacity(written.count)
        for ((item, _), copy) in zip(written, sealed) { copies[item] = try copy.get() }
        return copies
    }

    /// The items whose records differ between two states (for checking callers in debug builds).
    static func differing(_ state: ZoneSyncState, _ previous: ZoneSyncState?) -> Set<ItemID> {
        let old = previous?.records ?? [:]
        return Set(state.records.keys.filter { old[$0] != state.records[$0] }).union(old.keys.filter { state.records[$0] == nil })
    }

    /// A zone's counts for the status command, without opening any sealed record.
    package func zoneSummary(_ zone: ZoneID) throws(SyncClientError) -> (journalSequence: Int64, lastSync: Date?, pending: Int) {
        try read { db in
            let row = try Row.fetchOne(db, sql: "SELECT journal_sequence, last_sync FROM zone_state WHERE zone = ?", arguments: [zone.rawValue])
            let pending = try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM item_record WHERE zone = ? AND pending = 1 AND refusal IS NULL", arguments: [zone.rawValue]) ?? 0
            return (row?[0] ?? 0, (row?[1] as Double?).map(Date.init(timeIntervalSince1970:)), pending)
        }
    }
}

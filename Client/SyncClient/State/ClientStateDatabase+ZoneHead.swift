import Foundation
import GRDB
import KeychainCrypto
import SyncCore

extension ClientStateDatabase {
    /// The view of a zone's committed records (decision 0180's frontier, live frontier and digest),
    /// kept with the state so a start need not read every record to compare the statements; NULL
    /// when the last commit that wrote records did not know it. It holds only while the state's
    /// `epoch` is the one it was written with: every process commits under an epoch of its own, so a
    /// commit by another (an older build that knows nothing of the view, say) voids it. The index
    /// finds the records that make a round do something (pending, set aside, perhaps on the server)
    /// without a scan (issue 35: a quiet sync costs what changed, not the zone's size).
    static func registerZoneViewMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v13-zone-view") { db in
            try db.execute(sql: """
                ALTER TABLE zone_state ADD COLUMN view_frontier BLOB;
                ALTER TABLE zone_state ADD COLUMN view_live_frontier BLOB;
                ALTER TABLE zone_state ADD COLUMN view_digest BLOB;
                ALTER TABLE zone_state ADD COLUMN view_epoch INTEGER;
                CREATE INDEX item_record_waiting ON item_record (zone) WHERE \(waitingRecord);
                """)
        }
    }

    /// A record a round acts on whatever the server says: a version to push (or one set aside,
    /// which a round retries), or one the server may hold unacknowledged.
    private static let waitingRecord = "pending = 1 OR refusal IS NOT NULL OR may_be_on_server = 1"

    /// A zone's committed state without its records, when nothing in them waits: the zone synced
    /// before, no batch is unanswered, no record is pending, set aside or perhaps on the server,
    /// and the view of the records is kept (or not needed). Nil otherwise: the caller loads every
    /// record (``loadZone(_:device:sealer:unlayered:)``).
    /// - Returns: The state (its records empty), the progress, and the view of the records.
    package func loadZoneHead(
        _ zone: ZoneID, device: DeviceID, needsView: Bool
    ) throws(SyncClientError) -> (ZoneSyncState, ZoneProgress, ZoneStateView?)? {
        try read { db in
            guard let row = try Row.fetchOne(
                db, sql: "SELECT \(Self.headColumns), unanswered_batch IS NULL, view_frontier, view_live_frontier, view_digest, view_epoch = epoch FROM zone_state WHERE zone = ?",
                arguments: [zone.rawValue])
            else { return nil }
            var state = ZoneSyncState(device: device, zone: zone)
            var progress = ZoneProgress()
            Self.readHead(row, into: &state, progress: &progress)
            guard state.cursor > 0, row[Self.headColumnCount] as Bool else { return nil }
            let current = row[Self.headColumnCount + 4] as Bool? ?? false
            let view = current
                ? try Self.view(frontier: row[Self.headColumnCount + 1], live: row[Self.headColumnCount + 2], digest: row[Self.headColumnCount + 3])
                : nil
            guard view != nil || !needsView else { return nil }
            let waiting = try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM item_record WHERE zone = ? AND (\(Self.waitingRecord)))", arguments: [zone.rawValue])
            guard waiting == false else { return nil }
            return (state, progress, view)
        }
    }

    /// The columns of `zone_state` ``readHead(_:into:progress:)`` reads, in its order.
    static let headColumns = """
        cursor, write_counter, next_batch_id, epoch, journal_sequence, last_sync, latest_sequence, changes_taken_at, applies_covered
        """
    static let headColumnCount = 9

    /// Reads the columns ``headColumns`` names, from the row's first.
    static func readHead(_ row: Row, into state: inout ZoneSyncState, progress: inout ZoneProgress) {
        state.cursor = UInt64(row[0] as Int64)
        state.writeCounter = UInt64(row[1] as Int64)
        state.nextBatchID = UInt64(row[2] as Int64)
        state.epoch = UInt64(row[3] as Int64)
        progress.journalSequence = row[4]
        progress.lastSync = (row[5] as Double?).map(Date.init(timeIntervalSince1970:))
        state.latestSequence = UInt64(clamping: row[6] as Int64)
        progress.changesTakenAt = row[7]
        progress.appliesCovered = row[8]
    }

    /// Writes the view of the records just committed under `epoch`, or forgets it (`nil`).
    static func recordView(_ db: Database, zone: ZoneID, _ view: ZoneStateView?, epoch: UInt64) throws {
        try db.executeCached(
            sql: "UPDATE zone_state SET view_frontier = ?, view_live_frontier = ?, view_digest = ?, view_epoch = ? WHERE zone = ?",
            arguments: [
                view.map { StoredVectors.encode($0.frontier) }, view.map { StoredVectors.encode($0.liveFrontier) },
                view.map { Data($0.digest.bytes) }, view.map { _ in Int64(clamping: epoch) }, zone.rawValue,
            ])
    }

    private static func view(frontier: DatabaseValue, live: DatabaseValue, digest: Data?) throws -> ZoneStateView? {
        guard !frontier.isNull, !live.isNull, let digest else { return nil }
        guard let bytes = ZoneStateDigest(bytes: Array(digest)) else {
            throw SyncClientError(.localStorage, "a zone's stored state digest is damaged")
        }
        return ZoneStateView(frontier: try StoredVectors.vector(frontier), liveFrontier: try StoredVectors.vector(live), digest: bytes)
    }
}

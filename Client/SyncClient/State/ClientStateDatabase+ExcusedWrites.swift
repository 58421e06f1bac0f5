import DurableSQLite
import GRDB
import SyncCore

extension ClientStateDatabase {
    /// Per zone, the writes this device may lack without the server hiding them (R62): the join
    /// of the full frontiers other devices stated before this device last read the whole feed. A
    /// deletion collected before that read is gone for it; one made since is served to it before
    /// any collection can pass it.
    static func registerExcusedWritesMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v14-excused-writes") { db in
            try db.execute(sql: "CREATE TABLE excused_writes (zone TEXT PRIMARY KEY NOT NULL, frontier BLOB NOT NULL)")
        }
    }

    /// The writes recorded as excused for `zone`; nil: none recorded yet (a state file from before
    /// the record, or a zone never checked).
    package func excusedWrites(_ zone: ZoneID) throws(SyncClientError) -> VersionVector? {
        try read { db in
            let statement = try db.cachedStatement(sql: "SELECT frontier FROM excused_writes WHERE zone = ?")
            guard let value = try DatabaseValue.fetchOne(statement, arguments: [zone.rawValue]) else { return nil }
            return try StoredVectors.vector(value)
        }
    }

    /// Records `frontier` as the writes excused for `zone`.
    package func recordExcusedWrites(_ frontier: VersionVector, zone: ZoneID) throws(SyncClientError) {
        try write { db in
            try db.executeCached(
                sql: "INSERT INTO excused_writes (zone, frontier) VALUES (?, ?) ON CONFLICT (zone) DO UPDATE SET frontier = excluded.frontier",
                arguments: [zone.rawValue, StoredVectors.encode(frontier)])
        }
    }
}

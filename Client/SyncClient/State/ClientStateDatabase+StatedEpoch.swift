import DurableSQLite
import GRDB
import SyncCore

extension ClientStateDatabase {
    /// The latest key epoch another current device's verified statement named, and that device
    /// (decision 0250): what holds this device's pushes while its device log is behind it.
    static func registerStatedEpochMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v9-stated-epoch") { db in
            try db.execute(sql: "CREATE TABLE stated_epoch (id INTEGER PRIMARY KEY CHECK (id = 1), epoch INTEGER NOT NULL, device TEXT NOT NULL)")
        }
    }

    /// The latest epoch a verified statement of another device named; nil: none recorded.
    package func statedEpoch() throws(SyncClientError) -> (epoch: UInt32, device: DeviceID)? {
        try read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT epoch, device FROM stated_epoch WHERE id = 1"),
                let device = DeviceID(row[1] as String)
            else { return nil }
            return (UInt32(clamping: row[0] as Int64), device)
        }
    }

    /// Records that `device` stated `epoch`, unless a later one is recorded.
    package func recordStatedEpoch(_ epoch: UInt32, by device: DeviceID) throws(SyncClientError) {
        try write { db in
            try db.executeCached(
                sql: """
                    INSERT INTO stated_epoch (id, epoch, device) VALUES (1, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET epoch = excluded.epoch, device = excluded.device WHERE excluded.epoch > epoch
                    """,
                arguments: [Int64(epoch), device.rawValue])
        }
    }
}

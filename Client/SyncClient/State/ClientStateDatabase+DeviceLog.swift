import DurableSQLite
import Foundation
import GRDB

extension ClientStateDatabase {
    /// The account's device log as this device last verified it (decision 0122): entries in
    /// order, each as the server served it. A log served later must extend it.
    static func registerDeviceLogMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v2-device-log") { db in
            try db.execute(sql: """
                CREATE TABLE device_log (
                    position INTEGER PRIMARY KEY NOT NULL,
                    entry BLOB NOT NULL
                )
                """)
        }
    }

    /// The verified device log's entries, in order (empty before the first verification).
    package func verifiedDeviceLog() throws(SyncClientError) -> [[UInt8]] {
        try read { db in
            try Data.fetchAll(db, sql: "SELECT entry FROM device_log ORDER BY position").map { Array($0) }
        }
    }

    /// Records `entries`, a verified log that extends the one recorded (the caller checked it).
    package func saveVerifiedDeviceLog(_ entries: [[UInt8]]) throws(SyncClientError) {
        try write { db in
            let recorded = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM device_log") ?? 0
            for (position, entry) in entries.enumerated().dropFirst(recorded) {
                try db.executeCached(sql: "INSERT INTO device_log (position, entry) VALUES (?, ?)", arguments: [position, Data(entry)])
            }
        }
    }
}

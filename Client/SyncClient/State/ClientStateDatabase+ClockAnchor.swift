import DurableSQLite
import Foundation
import GRDB

extension ClientStateDatabase {
    /// The server's time as this device last trusted it, and this device's own wall clock then
    /// (``TrustedServerClock``): across restarts, the server's clock is trusted to have advanced
    /// no faster than this device's own since.
    static func registerClockAnchorMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v11-clock-anchor") { db in
            try db.execute(sql: "CREATE TABLE clock_anchor (id INTEGER PRIMARY KEY CHECK (id = 1), server REAL NOT NULL, local REAL NOT NULL)")
        }
    }

    /// The recorded anchor; nil before the first.
    package func clockAnchor() throws(SyncClientError) -> TrustedServerClock.Anchor? {
        try read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT server, local FROM clock_anchor WHERE id = 1") else { return nil }
            return TrustedServerClock.Anchor(server: Date(timeIntervalSince1970: row[0]), local: Date(timeIntervalSince1970: row[1]))
        }
    }

    /// Records `anchor` in place of the one before.
    package func saveClockAnchor(_ anchor: TrustedServerClock.Anchor) throws(SyncClientError) {
        try write { db in
            try db.execute(
                sql: "INSERT INTO clock_anchor (id, server, local) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET server = excluded.server, local = excluded.local",
                arguments: [anchor.server.timeIntervalSince1970, anchor.local.timeIntervalSince1970])
        }
    }
}

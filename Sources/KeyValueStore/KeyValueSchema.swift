import GRDB

/// The key-value database's schema and its migrations (docs/decisions/0060).
package enum KeyValueSchema {
    /// `PRAGMA application_id` of a key-value database: "SKKV".
    package static let applicationID: Int32 = 0x534B_4B56

    package static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: "PRAGMA application_id = \(applicationID)")
            try db.execute(sql: """
                CREATE TABLE kv_device (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    device TEXT NOT NULL
                );
                CREATE TABLE kv_store_state (
                    store TEXT PRIMARY KEY NOT NULL,
                    write_counter INTEGER NOT NULL
                );
                CREATE TABLE kv_value (
                    store TEXT NOT NULL,
                    key TEXT NOT NULL,
                    value BLOB NOT NULL,
                    size INTEGER NOT NULL,
                    PRIMARY KEY (store, key)
                ) WITHOUT ROWID;
                CREATE TABLE kv_version (
                    store TEXT NOT NULL,
                    key TEXT NOT NULL,
                    vector BLOB NOT NULL,
                    origin BLOB NOT NULL,
                    overwritten BLOB NOT NULL,
                    deleted INTEGER NOT NULL,
                    modified_at INTEGER NOT NULL,
                    device TEXT NOT NULL,
                    content BLOB NOT NULL,
                    PRIMARY KEY (store, key, vector)
                ) WITHOUT ROWID;
                CREATE TABLE kv_journal (
                    sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                    store TEXT NOT NULL,
                    key TEXT NOT NULL,
                    operation TEXT NOT NULL,
                    modified_at INTEGER NOT NULL
                );
                """)
        }
        // The account whose values the stores hold (decision 0071); none until a sync binds one.
        migrator.registerMigration("v2-account") { db in
            try db.execute(sql: """
                CREATE TABLE kv_account (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    account TEXT NOT NULL
                )
                """)
        }
        // Whether a stored version is one the server has (1: applied from it; 2: pushed from here
        // and taken, decision 0253): a device that lost its sync state does not push such a value
        // again as a new write of its own (decision 0186), and pushes its own again as the version
        // it was (0253). Any local write replaces the row, so the mark goes with it.
        migrator.registerMigration("v3-synced") { db in
            try db.execute(sql: "ALTER TABLE kv_version ADD COLUMN synced INTEGER NOT NULL DEFAULT 0")
        }
        // Whether this device sent the stored version to the server, answered or not (R53, as the
        // keychain's sent version, decision 0247): a device back without its sync state pushes it
        // again as that version, not as a new write that would beat a removal made over it.
        migrator.registerMigration("v4-sent") { db in
            try db.execute(sql: "ALTER TABLE kv_version ADD COLUMN sent INTEGER NOT NULL DEFAULT 0")
        }
        return migrator
    }
}

import Crypto
import GRDB
import KeychainModel

/// The keychain's database schema and its migrations (see docs/decisions/0010).
enum Schema {
    /// `PRAGMA application_id` of a keychain database: "SKCH".
    static let applicationID: Int32 = 0x534B_4348
    /// The schema version this build writes (`PRAGMA user_version`).
    static let version: Int32 = 8

    /// Attribute columns of the item table up to version 7 (decision 0280 sealed them), in a fixed order.
    static let attributeColumns: [Attribute] = Attribute.allCases

    /// The migrations; `deviceKey` opens the class keys a migration that seals needs.
    static func migrator(deviceKey: SymmetricKey) -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: "PRAGMA application_id = \(applicationID)")
            try db.execute(sql: "PRAGMA user_version = 1")
            try db.execute(sql: """
                CREATE TABLE keychain_state (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    generation INTEGER NOT NULL,
                    locked INTEGER NOT NULL,
                    passcode_salt BLOB,
                    passcode_rounds INTEGER,
                    passcode_block_size INTEGER,
                    passcode_parallelism INTEGER
                );
                INSERT INTO keychain_state (id, generation, locked) VALUES (1, 1, 0);
                CREATE TABLE class_key (
                    protection_class TEXT PRIMARY KEY NOT NULL,
                    device_wrapped BLOB,
                    passcode_wrapped BLOB
                );
                CREATE TABLE session_key (
                    protection_class TEXT PRIMARY KEY NOT NULL,
                    device_wrapped BLOB NOT NULL
                );
                """)
            let columns = attributeColumns.map { "\"\($0.rawValue)\" \(sqlType($0))" }.joined(separator: ",\n")
            try db.execute(sql: """
                CREATE TABLE item (
                    id INTEGER PRIMARY KEY,
                    identity BLOB NOT NULL,
                    class TEXT NOT NULL,
                    \(columns),
                    protection_class TEXT NOT NULL,
                    wrapped_key BLOB NOT NULL,
                    sealed_data BLOB NOT NULL
                );
                \(ItemClass.allCases.map(uniqueIndex).joined(separator: "\n"))
                CREATE TABLE change_journal (
                    sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                    item_identity BLOB NOT NULL,
                    primary_key BLOB NOT NULL,
                    operation TEXT NOT NULL,
                    time REAL NOT NULL
                );
                CREATE TABLE item_history (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    identity BLOB NOT NULL UNIQUE,
                    class TEXT NOT NULL,
                    primary_key BLOB NOT NULL,
                    attributes BLOB NOT NULL,
                    protection_class TEXT NOT NULL,
                    wrapped_key BLOB NOT NULL,
                    sealed_data BLOB NOT NULL,
                    recorded REAL NOT NULL
                );
                CREATE INDEX item_history_by_key ON item_history (primary_key);
                """)
        }
        migrator.registerMigration("v2-history-version-tag") { db in
            // A version lost in conflict resolution is kept once per primary key, however often the
            // resolution is replayed after a crash (decision 0055). Entries without a tag (a
            // version displaced by a restore) are not constrained.
            try db.execute(sql: """
                ALTER TABLE item_history ADD COLUMN version_tag BLOB;
                CREATE UNIQUE INDEX item_history_by_version ON item_history (primary_key, version_tag) WHERE version_tag IS NOT NULL;
                PRAGMA user_version = 2;
                """)
        }
        migrator.registerMigration("v3-remote-version") { db in
            // Which version a sync applied to each item, written in the apply's own transaction, so
            // that a sync state committed later (another file) can be caught up after a crash
            // between the two commits (decision 0107). `owner` names the sync state that wrote it.
            try db.execute(sql: """
                CREATE TABLE remote_version (
                    primary_key BLOB PRIMARY KEY NOT NULL,
                    owner TEXT NOT NULL,
                    version_tag BLOB NOT NULL
                );
                PRAGMA user_version = 3;
                """)
        }
        migrator.registerMigration("v4-remote-version-changed-locally") { db in
            // Whether the item was written locally after the apply that recorded its tag: a device
            // that returns without its sync state knows which of its copies are exactly a version
            // the server had (decision 0175).
            try db.execute(sql: """
                ALTER TABLE remote_version ADD COLUMN changed_locally INTEGER NOT NULL DEFAULT 0;
                PRAGMA user_version = 4;
                """)
        }
        migrator.registerMigration("v5-remote-version-server-version") { db in
            // The version the server holds that the item's value is exactly, when the device knows
            // it (NULL: a resolution made here, or a row from before): a device back without its
            // sync state refuses a listing older than it (decision 0243).
            try db.execute(sql: """
                ALTER TABLE remote_version ADD COLUMN server_version BLOB;
                PRAGMA user_version = 5;
                """)
        }
        migrator.registerMigration("v6-remote-version-sent-version") { db in
            // The version pushed from here whose answer has not come (NULL once answered, or
            // replaced): a device back without its sync state pushes its copy again as that same
            // version instead of as a new write (decision 0247).
            try db.execute(sql: """
                ALTER TABLE remote_version ADD COLUMN sent_version BLOB;
                PRAGMA user_version = 6;
                """)
        }
        migrator.registerMigration("v7-remote-apply-count") { db in
            // How many applies recorded version tags: a sync state that committed after the
            // last of them knows no item is held ahead of it, without reading every tag.
            try db.execute(sql: """
                CREATE TABLE remote_apply (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    count INTEGER NOT NULL
                );
                PRAGMA user_version = 7;
                """)
        }
        migrator.registerMigration("v8-sealed-metadata") { db in
            // Attributes, history attributes and the primary keys of the journal and of remote
            // versions sealed, lookups and uniqueness through blind indexes (decision 0280).
            try SealedMetadataMigration(db, deviceKey: deviceKey).run()
            try db.execute(sql: "PRAGMA user_version = 8")
        }
        return migrator
    }

    /// One partial unique index per class over its primary-key columns (never NULL: the store
    /// fills missing key attributes with their empty values). It is both the duplicate rule and
    /// the lookup index, and an insert touches only its own class's index. The leading columns
    /// are the ones queries name most (service or server, then account).
    private static func uniqueIndex(_ itemClass: ItemClass) -> String {
        let leading: [Attribute] = switch itemClass {
        case .genericPassword: [.service, .account]
        case .internetPassword: [.server, .account]
        case .certificate: [.issuer, .serialNumber]
        case .key: [.applicationTag, .applicationLabel]
        }
        let columns = leading + itemClass.primaryKeyAttributes.filter { !leading.contains($0) }
        return "CREATE UNIQUE INDEX item_key_\(itemClass.rawValue) ON item (\(columns.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))) WHERE class = '\(itemClass.rawValue)';"
    }

    private static func sqlType(_ attribute: Attribute) -> String {
        switch attribute.kind {
        case .string: "TEXT"
        case .data: "BLOB"
        case .integer, .bool: "INTEGER"
        case .date: "REAL"
        }
    }
}

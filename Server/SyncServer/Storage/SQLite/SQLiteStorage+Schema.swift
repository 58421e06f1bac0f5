import GRDB

extension SQLiteStorage {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE account (
                    id TEXT PRIMARY KEY NOT NULL,
                    name TEXT NOT NULL UNIQUE,
                    verifier BLOB NOT NULL,
                    kdfParameters BLOB NOT NULL,
                    salt BLOB NOT NULL,
                    wrappedAccountKey BLOB NOT NULL,
                    wrappedRecoveryKey BLOB,
                    createdAt REAL NOT NULL,
                    latestSequence INTEGER NOT NULL DEFAULT 0,
                    itemCount INTEGER NOT NULL DEFAULT 0
                ) STRICT;
                CREATE TABLE device (
                    account TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                    id TEXT NOT NULL,
                    name TEXT NOT NULL,
                    tokenHash BLOB NOT NULL UNIQUE,
                    createdAt REAL NOT NULL,
                    lastSeenAt REAL NOT NULL,
                    revokedAt REAL,
                    PRIMARY KEY (account, id)
                ) STRICT;
                CREATE TABLE acknowledgement (
                    account TEXT NOT NULL,
                    device TEXT NOT NULL,
                    zone TEXT NOT NULL,
                    sequence INTEGER NOT NULL,
                    PRIMARY KEY (account, device, zone),
                    FOREIGN KEY (account, device) REFERENCES device(account, id) ON DELETE CASCADE
                ) STRICT;
                CREATE TABLE zone (
                    account TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                    name TEXT NOT NULL,
                    horizon INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (account, name)
                ) STRICT;
                CREATE TABLE item (
                    account TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                    zone TEXT NOT NULL,
                    id TEXT NOT NULL,
                    sequence INTEGER NOT NULL,
                    tombstone INTEGER NOT NULL,
                    versions BLOB NOT NULL,
                    PRIMARY KEY (account, zone, id)
                ) STRICT, WITHOUT ROWID;
                CREATE UNIQUE INDEX item_feed ON item(account, zone, sequence);
                CREATE INDEX item_tombstone ON item(account, zone, sequence) WHERE tombstone = 1;
                """)
        }
        // The secret of decision 0065: one row, inserted by ``serverSecret()`` on first use.
        migrator.registerMigration("v2") { db in
            try db.execute(sql: """
                CREATE TABLE serverSecret (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    secret BLOB NOT NULL CHECK (length(secret) = 32)
                ) STRICT;
                """)
        }
        return migrator
    }
}

import Foundation
import GRDB
import SyncCore

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
        // The one batch rule (decision 0100): the account's byte usage and each item's bytes,
        // counted incrementally; per device and zone, `mustResync` and the last batch's answer.
        migrator.registerMigration("v3") { db in
            try db.execute(sql: """
                ALTER TABLE account ADD COLUMN storedBytes INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE item ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE acknowledgement ADD COLUMN mustResync INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE acknowledgement ADD COLUMN lastBatch INTEGER;
                ALTER TABLE acknowledgement ADD COLUMN lastAnswer BLOB;
                """)
            let rows = try Row.fetchAll(db, sql: "SELECT account, zone, id, versions FROM item")
            for row in rows {
                let bytes = BatchMerge.bytes(try SealedVersion.decode(row["versions"] as Data))
                try db.execute(
                    sql: "UPDATE item SET bytes = ? WHERE account = ? AND zone = ? AND id = ?",
                    arguments: [bytes, row["account"], row["zone"], row["id"]])
            }
            try db.execute(sql: """
                UPDATE account SET storedBytes = (SELECT COALESCE(SUM(bytes), 0) FROM item WHERE item.account = account.id)
                """)
        }
        registerAccountStateMigration(in: &migrator)
        registerAdministrationMigration(in: &migrator)
        registerApprovalMigration(in: &migrator)
        // The recovery key's verifier (decision 0132).
        migrator.registerMigration("recoveryVerifier") { db in
            try db.execute(sql: "ALTER TABLE account ADD COLUMN recoveryVerifier BLOB")
        }
        // Where the last restore's backup ended (decision 0154); NULL for an account never restored.
        migrator.registerMigration("restoredThrough") { db in
            try db.execute(sql: "ALTER TABLE account ADD COLUMN restoredThrough INTEGER")
        }
        // When the zone's tombstones were last collected (decision 0175); NULL: never.
        migrator.registerMigration("collectedAt") { db in
            try db.execute(sql: "ALTER TABLE zone ADD COLUMN collectedAt REAL")
        }
        // The tombstones a collection removes from `item`, kept as the evidence of a deletion that
        // a device back past the horizon asks for (rule R10a of docs/sync-rules.md): the latest per
        // item, listed only in full resyncs that ask, for items `item` no longer holds. A zone's
        // `forgottenAt` is when it last dropped a deletion without keeping it: every collection
        // before this migration did.
        migrator.registerMigration("collectedDeletion") { db in
            try db.execute(sql: """
                CREATE TABLE collected_deletion (
                    account TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                    zone TEXT NOT NULL,
                    id TEXT NOT NULL,
                    sequence INTEGER NOT NULL,
                    versions BLOB NOT NULL,
                    bytes INTEGER NOT NULL,
                    PRIMARY KEY (account, zone, id)
                ) STRICT, WITHOUT ROWID;
                CREATE INDEX collected_deletion_feed ON collected_deletion(account, zone, sequence);
                ALTER TABLE zone ADD COLUMN forgottenAt REAL;
                UPDATE zone SET forgottenAt = collectedAt;
                """)
        }
        registerIdentityCardMigration(in: &migrator)
        registerGroupMigration(in: &migrator)
        // No batch memory (decision 0289): the last batch's number and answer go.
        migrator.registerMigration("noBatchMemory") { db in
            try db.execute(sql: """
                ALTER TABLE acknowledgement DROP COLUMN lastBatch;
                ALTER TABLE acknowledgement DROP COLUMN lastAnswer;
                """)
        }
        return migrator
    }
}

import Crypto
import Foundation
import GRDB
import KeychainModel

/// Schema version 8 (decision 0280): rewrites, in the migration's one transaction, every table
/// that held metadata in the clear — the item table's attribute columns, the history's attributes
/// and primary keys, the journal's and the remote versions' primary keys — as sealed values and
/// blind indexes. Rows keep their IDs (persistent references) and sequences. The old tables are
/// dropped; with `secure_delete` on, their pages are zeroed as they are freed.
struct SealedMetadataMigration {
    let db: Database
    /// Nil for a keychain being created: its class keys come after the schema, and it has no rows.
    let keys: MetadataKeys?

    init(_ db: Database, deviceKey: SymmetricKey) throws {
        self.db = db
        keys = try Data.fetchOne(
            db, sql: "SELECT device_wrapped FROM class_key WHERE protection_class = ?", arguments: [ProtectionClass.always.rawValue]
        ).map { wrapped in
            MetadataKeys(alwaysClassKey: try SecretSealer.openKey(wrapped, with: deviceKey, context: KeyState.deviceContext(.always)))
        }
    }

    func run() throws {
        try rewriteItems()
        try rewriteHistory()
        try rewriteJournal()
        try rewriteRemoteVersions()
    }

    private func requiredKeys() throws -> MetadataKeys {
        guard let keys else { throw KeychainError(.notAvailable, "the keychain file is corrupt (items without class keys)") }
        return keys
    }

    private func rewriteItems() throws {
        try db.execute(sql: """
            CREATE TABLE item_sealed (
                id INTEGER PRIMARY KEY,
                identity BLOB NOT NULL,
                class TEXT NOT NULL,
                sync INTEGER NOT NULL,
                key_index BLOB NOT NULL UNIQUE,
                lookup_index BLOB NOT NULL,
                pair_index BLOB NOT NULL,
                attributes BLOB NOT NULL,
                protection_class TEXT NOT NULL,
                wrapped_key BLOB NOT NULL,
                sealed_data BLOB NOT NULL
            )
            """)
        let insert = try db.makeStatement(sql: """
            INSERT INTO item_sealed (id, identity, class, sync, key_index, lookup_index, pair_index, attributes, protection_class, wrapped_key, sealed_data)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        let rows = try Row.fetchCursor(db, sql: "SELECT * FROM item")
        while let row = try rows.next() {
            guard let itemClass = ItemClass(rawValue: row["class"]) else { throw KeychainError(.decode, "stored item has an unknown class") }
            var attributes = ItemAttributes()
            for attribute in Schema.attributeColumns {
                attributes[attribute] = Self.value(row[attribute.rawValue], of: attribute.kind)
            }
            let identity = Array(row["identity"] as Data)
            var arguments: [DatabaseValue] = [row["id"], Data(identity).databaseValue, itemClass.rawValue.databaseValue]
            arguments += try Keychain.metadataColumns(Item(itemClass: itemClass, attributes: attributes), identity: identity, keys: requiredKeys())
            arguments += [row["protection_class"], row["wrapped_key"], row["sealed_data"]]
            try insert.execute(arguments: StatementArguments(databaseValues: arguments))
        }
        try db.execute(sql: """
            DROP TABLE item;
            ALTER TABLE item_sealed RENAME TO item;
            CREATE INDEX item_by_lookup ON item (lookup_index, pair_index);
            """)
    }

    private func rewriteHistory() throws {
        try db.execute(sql: """
            CREATE TABLE item_history_sealed (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                identity BLOB NOT NULL UNIQUE,
                class TEXT NOT NULL,
                key_index BLOB NOT NULL,
                attributes BLOB NOT NULL,
                protection_class TEXT NOT NULL,
                wrapped_key BLOB NOT NULL,
                sealed_data BLOB NOT NULL,
                recorded REAL NOT NULL,
                version_tag BLOB
            )
            """)
        let insert = try db.makeStatement(sql: """
            INSERT INTO item_history_sealed (id, identity, class, key_index, attributes, protection_class, wrapped_key, sealed_data, recorded, version_tag)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        let rows = try Row.fetchCursor(db, sql: "SELECT * FROM item_history")
        while let row = try rows.next() {
            let keys = try requiredKeys()
            let identity = Array(row["identity"] as Data)
            let attributes = try JSONDecoder().decode(ItemAttributes.self, from: row["attributes"] as Data)
            try insert.execute(arguments: [
                row["id"], Data(identity), row["class"], keys.keyIndex(try Self.primaryKey(row["primary_key"])),
                try keys.sealAttributes(attributes, .historyAttributes, identity: identity),
                row["protection_class"], row["wrapped_key"], row["sealed_data"], row["recorded"], row["version_tag"],
            ])
        }
        try replaceKeepingSequence("item_history", with: "item_history_sealed")
        try db.execute(sql: """
            CREATE INDEX item_history_by_key ON item_history (key_index);
            CREATE UNIQUE INDEX item_history_by_version ON item_history (key_index, version_tag) WHERE version_tag IS NOT NULL;
            """)
    }

    private func rewriteJournal() throws {
        try db.execute(sql: """
            CREATE TABLE change_journal_sealed (
                sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                item_identity BLOB NOT NULL,
                key_index BLOB NOT NULL,
                sealed_key BLOB NOT NULL,
                operation TEXT NOT NULL,
                time REAL NOT NULL
            )
            """)
        let insert = try db.makeStatement(sql: """
            INSERT INTO change_journal_sealed (sequence, item_identity, key_index, sealed_key, operation, time) VALUES (?, ?, ?, ?, ?, ?)
            """)
        let rows = try Row.fetchCursor(db, sql: "SELECT * FROM change_journal")
        while let row = try rows.next() {
            let identity = Array(row["item_identity"] as Data)
            let (index, sealed) = try requiredKeys().indexedKey(try Self.primaryKey(row["primary_key"]), .journalKey, identity: identity)
            try insert.execute(arguments: [row["sequence"], Data(identity), index, sealed, row["operation"], row["time"]])
        }
        try replaceKeepingSequence("change_journal", with: "change_journal_sealed")
    }

    private func rewriteRemoteVersions() throws {
        try db.execute(sql: """
            CREATE TABLE remote_version_sealed (
                key_index BLOB PRIMARY KEY NOT NULL,
                sealed_key BLOB NOT NULL,
                owner TEXT NOT NULL,
                version_tag BLOB NOT NULL,
                changed_locally INTEGER NOT NULL DEFAULT 0,
                server_version BLOB,
                sent_version BLOB
            )
            """)
        let insert = try db.makeStatement(sql: """
            INSERT INTO remote_version_sealed (key_index, sealed_key, owner, version_tag, changed_locally, server_version, sent_version)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """)
        let rows = try Row.fetchCursor(db, sql: "SELECT * FROM remote_version")
        while let row = try rows.next() {
            let (index, sealed) = try requiredKeys().indexedKey(try Self.primaryKey(row["primary_key"]), .remoteVersionKey)
            try insert.execute(arguments: [
                index, sealed, row["owner"], row["version_tag"], row["changed_locally"], row["server_version"], row["sent_version"],
            ])
        }
        try db.execute(sql: """
            DROP TABLE remote_version;
            ALTER TABLE remote_version_sealed RENAME TO remote_version;
            """)
    }

    /// Puts `new` in place of `old`, whose AUTOINCREMENT counter it continues: a sequence or
    /// history number is never handed out twice, even one whose row is gone.
    private func replaceKeepingSequence(_ old: String, with new: String) throws {
        let used = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = ?", arguments: [old]) ?? 0
        try db.execute(sql: "DROP TABLE \(old); ALTER TABLE \(new) RENAME TO \(old)")
        let copied = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = ?", arguments: [old]) ?? 0
        try db.execute(sql: "DELETE FROM sqlite_sequence WHERE name = ?", arguments: [old])
        try db.execute(sql: "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", arguments: [old, max(used, copied)])
    }

    private static func primaryKey(_ stored: Data) throws -> PrimaryKey {
        guard let key = PrimaryKey(storageBytes: stored) else { throw KeychainError(.decode, "stored primary key cannot be decoded") }
        return key
    }

    /// An attribute column's value as version 7 stored it; nil for NULL.
    private static func value(_ column: DatabaseValue, of kind: Attribute.Kind) -> AttributeValue? {
        switch (kind, column.storage) {
        case (_, .null): nil
        case (.string, .string(let text)): .string(text)
        case (.data, .blob(let data)): .data(Array(data))
        case (.integer, .int64(let number)): .integer(number)
        case (.bool, .int64(let number)): .bool(number != 0)
        case (.date, .double(let seconds)): .date(seconds)
        case (.date, .int64(let seconds)): .date(Double(seconds))
        default: nil
        }
    }
}

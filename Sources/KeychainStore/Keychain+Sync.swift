import Crypto
import Foundation
import GRDB
import KeychainModel

/// What the sync engine needs from the local keychain: the change journal, items by identity,
/// and the journal's bookkeeping.
extension Keychain {
    /// Journal entries with a sequence greater than `sequence`, oldest first.
    /// - Parameters:
    ///   - sequence: The last sequence already consumed (0 for all).
    ///   - limit: The most entries returned.
    ///   - heldUpTo: Leaves out the entries up to this sequence of an item the keychain holds as
    ///     synchronizable now, without opening their keys: a first sync that read every such item
    ///     after them has their values already. Every entry it would leave out is read when fewer
    ///     than `limit` come back.
    public func journalEntries(after sequence: Int64, limit: Int = 1000, omittingHeldUpTo heldUpTo: Int64 = 0) throws(KeychainError) -> [JournalEntry] {
        try read { db, state in
            let keys = try state.metadata
            return try Row.fetchAll(
                db, sql: """
                    SELECT sequence, item_identity, sealed_key, operation, time FROM change_journal AS entry
                    WHERE sequence > ? AND NOT (sequence <= ? AND EXISTS (SELECT 1 FROM item WHERE item.key_index = entry.key_index AND item.sync = 1))
                    ORDER BY sequence LIMIT ?
                    """,
                arguments: [sequence, heldUpTo, limit]
            ).map { row in
                let identity = Array(row[1] as Data)
                guard let operation = JournalEntry.Operation(rawValue: row[3]) else {
                    throw KeychainError(.decode, "journal entry cannot be decoded")
                }
                return JournalEntry(
                    sequence: row[0], itemIdentity: identity, primaryKey: try keys.openKey(row[2], .journalKey, identity: identity),
                    operation: operation, time: Date(timeIntervalSince1970: row[4]))
            }
        }
    }

    /// The sequence of the journal's newest entry; 0 when it has none.
    public func latestJournalSequence() throws(KeychainError) -> Int64 {
        try readOneStatement { db in try Int64.fetchOne(db, sql: "SELECT MAX(sequence) FROM change_journal") ?? 0 }
    }

    /// The item with this primary key, with its secret, or nil when there is none.
    /// - Throws: ``KeychainStatus/interactionNotAllowed`` when its class is locked.
    public func item(withPrimaryKey primaryKey: PrimaryKey) throws(KeychainError) -> Item? {
        try read { db, state in
            guard let stored = try fetchStored(db, primaryKey: primaryKey) else { return nil }
            return try stored.itemWithSecret(state)
        }
    }

    /// Every synchronizable item, read in one transaction with its attributes and secret still
    /// sealed, to be opened item by item on any thread: a first sync reads every item it pushes
    /// this way, and opens them on every core (issue 35).
    /// - Throws: ``KeychainStatus/interactionNotAllowed`` while locked, as a search does.
    public func sealedSynchronizableItems() throws(KeychainError) -> SealedItems {
        try read { db, state in
            guard !state.locked else { throw KeychainError(.interactionNotAllowed) }
            let keys = try metadataKeys(db)
            var rows: [StoredItem] = []
            for itemClass in ItemClass.allCases {
                let query = Query(itemClass: itemClass, synchronizable: .yes, limit: .all)
                rows += try ItemFilter(query, keys: keys).fetchSealed(db, secrets: true)
            }
            return SealedItems(rows: rows, keys: keys, state: state)
        }
    }

    /// The items with these primary keys, with their secrets, read in one transaction; a key
    /// with no item is absent. What ``item(withPrimaryKey:)`` gives for each, without a read
    /// transaction per item (each starts by expiring the connection's prepared statements).
    /// - Throws: ``KeychainStatus/interactionNotAllowed`` when the class of one of them is locked.
    public func items(withPrimaryKeys primaryKeys: [PrimaryKey]) throws(KeychainError) -> [PrimaryKey: Item] {
        try read { db, state in
            var items: [PrimaryKey: Item] = [:]
            for primaryKey in primaryKeys {
                guard let stored = try fetchStored(db, primaryKey: primaryKey) else { continue }
                items[primaryKey] = try stored.itemWithSecret(state)
            }
            return items
        }
    }

    // MARK: - Helpers

    func fetchStored(_ db: Database, primaryKey: PrimaryKey, secrets: Bool = true) throws -> StoredItem? {
        let keys = try metadataKeys(db)
        return try fetchStored(db, keyIndex: keys.keyIndex(primaryKey), opening: keys, secrets: secrets)
    }

    /// The item whose primary key has index `keyIndex`, its attributes opened with `keys` when
    /// given (a row to replace needs only its ID and identity), or nil when there is none.
    func fetchStored(_ db: Database, keyIndex: Data, opening keys: MetadataKeys?, secrets: Bool) throws -> StoredItem? {
        let statement = try db.cachedStatement(sql: "SELECT \(StoredItem.selection(secrets: secrets)) FROM item WHERE key_index = ?")
        let columns = RawColumns(statement: statement.sqliteStatement)
        columns.bind([keyIndex.databaseValue])
        defer { columns.finish() }
        return try columns.step(db) ? StoredItem(columns, keys: keys, secrets: secrets) : nil
    }

    /// Journals a local change, and marks the item's remote version tag (if any) as no longer
    /// the value it holds (decision 0175).
    func appendJournal(_ db: Database, identity: [UInt8], primaryKey: PrimaryKey, operation: JournalEntry.Operation) throws {
        let (index, sealed) = try metadataKeys(db).indexedKey(primaryKey, .journalKey, identity: identity)
        try db.cachedStatement(
            sql: "INSERT INTO change_journal (item_identity, key_index, sealed_key, operation, time) VALUES (?, ?, ?, ?, ?)"
        ).execute(arguments: [Data(identity), index, sealed, operation.rawValue, now.timeIntervalSince1970])
        try db.cachedStatement(sql: "UPDATE remote_version SET changed_locally = 1 WHERE key_index = ? AND changed_locally = 0")
            .execute(arguments: [index])
    }

    /// Journals an item moving from one primary key to another (or staying).
    func journalReplacement(_ db: Database, identity: [UInt8], from old: PrimaryKey, to new: PrimaryKey) throws {
        if old == new {
            if new.isSynchronizable { try appendJournal(db, identity: identity, primaryKey: new, operation: .update) }
            return
        }
        if old.isSynchronizable { try appendJournal(db, identity: identity, primaryKey: old, operation: .delete) }
        if new.isSynchronizable { try appendJournal(db, identity: identity, primaryKey: new, operation: .add) }
    }
}

/// Items read with their attributes and secrets still sealed (``Keychain/sealedSynchronizableItems()``),
/// with the keys that open them as they were at the read.
public struct SealedItems: Sendable {
    let rows: [StoredItem]
    let keys: MetadataKeys
    let state: KeyState

    /// How many items were read.
    public var count: Int { rows.count }

    /// The item at `index` with its primary key and secret; nil when `skipping` names its key
    /// (its secret is not opened).
    public func item(at index: Int, skipping: Set<PrimaryKey> = []) throws(KeychainError) -> (key: PrimaryKey, item: Item)? {
        let stored = try rows[index].opened(with: keys)
        let key = PrimaryKey(itemClass: stored.itemClass, attributes: stored.attributes)
        guard !skipping.contains(key) else { return nil }
        return (key, try stored.itemWithSecret(state))
    }
}

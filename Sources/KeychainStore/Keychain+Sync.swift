import Crypto
import Foundation
import GRDB
import KeychainModel

/// What the sync engine needs from the local keychain: the change journal, items by identity,
/// remote writes that are not journaled again, and the history of versions lost in conflicts.
extension Keychain {
    /// Journal entries with a sequence greater than `sequence`, oldest first.
    /// - Parameters:
    ///   - sequence: The last sequence already consumed (0 for all).
    ///   - limit: The most entries returned.
    public func journalEntries(after sequence: Int64, limit: Int = 1000) throws(KeychainError) -> [JournalEntry] {
        try read { db, _ in
            try Row.fetchAll(
                db, sql: "SELECT sequence, item_identity, primary_key, operation, time FROM change_journal WHERE sequence > ? ORDER BY sequence LIMIT ?",
                arguments: [sequence, limit]
            ).map { row in
                guard let primaryKey = PrimaryKey(storageBytes: row[2]), let operation = JournalEntry.Operation(rawValue: row[3]) else {
                    throw KeychainError(.decode, "journal entry cannot be decoded")
                }
                return JournalEntry(
                    sequence: row[0], itemIdentity: Array(row[1] as Data), primaryKey: primaryKey, operation: operation,
                    time: Date(timeIntervalSince1970: row[4]))
            }
        }
    }

    /// The item with this primary key, with its secret, or nil when there is none.
    /// - Throws: ``KeychainStatus/interactionNotAllowed`` when its class is locked.
    public func item(withPrimaryKey primaryKey: PrimaryKey) throws(KeychainError) -> Item? {
        try read { db, state in
            guard let stored = try fetchStored(db, primaryKey: primaryKey) else { return nil }
            return try opened(stored, state: state)
        }
    }

    /// Applies a remote version of a synchronizable item: inserts it, or replaces the local item
    /// with the same primary key. Its dates are kept; nothing is journaled.
    /// - Throws: ``KeychainStatus/param`` when the item is not synchronizable.
    public func applyRemoteVersion(_ remote: Item) throws(KeychainError) {
        guard remote.isSynchronizable else { throw KeychainError(.param, "a remote item must be synchronizable") }
        let item = try preparedKeepingDates(remote)
        try write { db, state in
            if let stored = try fetchStored(db, primaryKey: item.primaryKey) {
                try db.cachedStatement(sql: "DELETE FROM item WHERE id = ?").execute(arguments: [stored.rowID])
                try insert(db, item, identity: stored.identity, state: state)
            } else {
                try insert(db, item, identity: Self.newIdentity(), state: state)
            }
        }
    }

    /// Applies a remote deletion; nothing is journaled. Deleting an absent item is not an error.
    public func applyRemoteDeletion(of primaryKey: PrimaryKey) throws(KeychainError) {
        try write { db, _ in
            if let stored = try fetchStored(db, primaryKey: primaryKey) {
                try deleteRow(db, stored, journaled: false)
            }
        }
    }

    /// Keeps `version` (with its data) in the history of its primary key.
    public func recordHistoryVersion(_ version: Item) throws(KeychainError) {
        let item = try preparedKeepingDates(version)
        let recorded = now
        try write { db, state in try insertHistory(db, item, state: state, recorded: recorded) }
    }

    /// The history versions of a primary key, oldest first, without their data.
    public func historyVersions(of primaryKey: PrimaryKey) throws(KeychainError) -> [HistoryVersion] {
        try read { db, _ in
            try Row.fetchAll(
                db, sql: "SELECT id, class, attributes, recorded FROM item_history WHERE primary_key = ? ORDER BY id",
                arguments: [primaryKey.storageBytes]
            ).map { row in
                guard let itemClass = ItemClass(rawValue: row[1]) else { throw KeychainError(.decode) }
                let attributes = try JSONDecoder().decode(ItemAttributes.self, from: row[2] as Data)
                return HistoryVersion(
                    id: row[0], item: Item(itemClass: itemClass, attributes: attributes), recorded: Date(timeIntervalSince1970: row[3]))
            }
        }
    }

    /// Makes a history version the current item again, in one transaction: the current item (if
    /// any) takes its place in the history, and the change is journaled like a local edit.
    /// - Throws: ``KeychainStatus/itemNotFound`` for an unknown version.
    public func restoreHistoryVersion(_ id: Int64) throws(KeychainError) {
        let restoredAt = now
        try write { db, state in
            guard let row = try Row.fetchOne(
                db, sql: "SELECT identity, class, attributes, protection_class, wrapped_key, sealed_data, recorded FROM item_history WHERE id = ?",
                arguments: [id])
            else { throw KeychainError(.itemNotFound) }
            guard let itemClass = ItemClass(rawValue: row[1]), let protectionClass = ProtectionClass(rawValue: row[3]) else {
                throw KeychainError(.decode)
            }
            var restored = Item(itemClass: itemClass, attributes: try JSONDecoder().decode(ItemAttributes.self, from: row[2] as Data))
            restored.data = try SecretSealer.open(
                .init(wrappedKey: row[4], sealedData: row[5]), identity: Array(row[0] as Data), protectionClass: protectionClass,
                classKey: state.key(for: protectionClass))
            restored.attributes.modificationDate = restoredAt
            try db.execute(sql: "DELETE FROM item_history WHERE id = ?", arguments: [id])
            if let current = try fetchStored(db, primaryKey: restored.primaryKey) {
                let displaced = try opened(current, state: state)
                try insertHistory(db, displaced, state: state, recorded: restoredAt)
                try replace(db, current, with: restored, state: state)
            } else {
                let identity = Self.newIdentity()
                try insert(db, restored, identity: identity, state: state)
                if restored.isSynchronizable {
                    try appendJournal(db, identity: identity, primaryKey: restored.primaryKey, operation: .add)
                }
            }
        }
    }

    // MARK: - Helpers

    /// Applies the add defaults but keeps the dates the item brings (a version from elsewhere).
    private func preparedKeepingDates(_ item: Item) throws(KeychainError) -> Item {
        var prepared = try ItemRules.preparedForAdd(item, now: now, defaultAccessGroup: configuration.defaultAccessGroup)
        prepared.attributes.creationDate = item.attributes.creationDate ?? prepared.attributes.creationDate
        prepared.attributes.modificationDate = item.attributes.modificationDate ?? prepared.attributes.modificationDate
        return prepared
    }

    func fetchStored(_ db: Database, primaryKey: PrimaryKey) throws -> StoredItem? {
        try ItemFilter(primaryKey.exactQuery()).fetch(db, attributes: true, secrets: true, limit: 1).first
    }

    func opened(_ stored: StoredItem, state: KeyState) throws -> Item {
        var item = stored.item
        if let sealed = stored.sealed {
            item.data = try SecretSealer.open(
                sealed, identity: stored.identity, protectionClass: stored.protectionClass, classKey: state.key(for: stored.protectionClass))
        }
        return item
    }

    func appendJournal(_ db: Database, identity: [UInt8], primaryKey: PrimaryKey, operation: JournalEntry.Operation) throws {
        try db.cachedStatement(
            sql: "INSERT INTO change_journal (item_identity, primary_key, operation, time) VALUES (?, ?, ?, ?)"
        ).execute(arguments: [Data(identity), primaryKey.storageBytes, operation.rawValue, now.timeIntervalSince1970])
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

    private func insertHistory(_ db: Database, _ item: Item, state: KeyState, recorded: Date) throws {
        let identity = Self.newIdentity()
        let protectionClass = item.accessibility.protectionClass
        let sealed = try SecretSealer.seal(
            item.data ?? [], identity: identity, protectionClass: protectionClass, classKey: state.key(for: protectionClass))
        try db.execute(
            sql: """
                INSERT INTO item_history (identity, class, primary_key, attributes, protection_class, wrapped_key, sealed_data, recorded)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                Data(identity), item.itemClass.rawValue, item.primaryKey.storageBytes, try JSONEncoder().encode(item.attributes),
                protectionClass.rawValue, sealed.wrappedKey, sealed.sealedData, recorded.timeIntervalSince1970,
            ])
    }
}

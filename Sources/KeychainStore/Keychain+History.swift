import Foundation
import GRDB
import KeychainModel

/// The history of versions lost in conflict resolution: kept sealed like items, listed, read and
/// restored by the user.
extension Keychain {
    /// Keeps `version` (with its data) in the history of its primary key.
    /// - Parameter versionTag: Names the version; a version already kept with the same primary key
    ///   and tag is not kept again. Nil: always kept.
    public func recordHistoryVersion(_ version: Item, versionTag: [UInt8]? = nil) throws(KeychainError) {
        let item = try preparedKeepingDates(version)
        let recorded = now
        try write { db, state in try insertHistory(db, item, versionTag: versionTag, state: state, recorded: recorded) }
    }

    /// The history versions of a primary key, oldest first.
    /// - Parameter includingData: Also open each version's secret (its class must be unlocked).
    /// - Throws: ``KeychainStatus/interactionNotAllowed`` when data is asked for and a version's
    ///   class is locked.
    public func historyVersions(of primaryKey: PrimaryKey, includingData: Bool = false) throws(KeychainError) -> [HistoryVersion] {
        try read { db, state in
            try Row.fetchAll(
                db, sql: "SELECT id, \(Self.historyColumns) FROM item_history WHERE key_index = ? ORDER BY id",
                arguments: [state.metadata.keyIndex(primaryKey)]
            ).map { row in
                let item = try Self.historyItem(row, offset: 1, state: state, includingData: includingData)
                return HistoryVersion(id: row[0], item: item, recorded: Date(timeIntervalSince1970: row[7]))
            }
        }
    }

    /// How many history versions a primary key has: one indexed count, no secret opened, so the
    /// `find` verbs can say that an item has some.
    public func historyCount(of primaryKey: PrimaryKey) throws(KeychainError) -> Int {
        try readOneStatement { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item_history WHERE key_index = ?", arguments: [metadataKeys(db).keyIndex(primaryKey)]) ?? 0
        }
    }

    /// Makes a history version the current item again, in one transaction: the current item (if
    /// any) takes its place in the history, and the change is journaled like a local edit, so it
    /// syncs as a new version.
    /// - Returns: The number the replaced current item got in the history; nil when there was none.
    /// - Throws: ``KeychainStatus/itemNotFound`` for an unknown version.
    @discardableResult
    public func restoreHistoryVersion(_ id: Int64) throws(KeychainError) -> Int64? {
        try refuseIfReadOnly()
        let restoredAt = now
        return try write { db, state -> Int64? in
            guard let row = try Row.fetchOne(db, sql: "SELECT \(Self.historyColumns) FROM item_history WHERE id = ?", arguments: [id])
            else { throw KeychainError(.itemNotFound) }
            var restored = try Self.historyItem(row, offset: 0, state: state, includingData: true)
            restored.attributes.modificationDate = restoredAt
            try db.execute(sql: "DELETE FROM item_history WHERE id = ?", arguments: [id])
            if let current = try fetchStored(db, primaryKey: restored.primaryKey) {
                let displaced = try current.itemWithSecret(state)
                try insertHistory(db, displaced, versionTag: nil, state: state, recorded: restoredAt)
                let displacedID = db.lastInsertedRowID
                try replace(db, current, with: restored, state: state)
                return displacedID
            } else {
                let identity = Self.newIdentity()
                try insert(db, restored, identity: identity, state: state)
                if restored.isSynchronizable {
                    try appendJournal(db, identity: identity, primaryKey: restored.primaryKey, operation: .add)
                }
                return nil
            }
        }
    }

    private static let historyColumns = "identity, class, attributes, protection_class, wrapped_key, sealed_data, recorded"

    /// The version in `row` (``historyColumns`` from `offset`), its secret opened when asked.
    private static func historyItem(_ row: Row, offset: Int, state: KeyState, includingData: Bool) throws -> Item {
        guard let itemClass = ItemClass(rawValue: row[offset + 1]), let protectionClass = ProtectionClass(rawValue: row[offset + 3]) else {
            throw KeychainError(.decode)
        }
        let identity = Array(row[offset] as Data)
        var item = Item(itemClass: itemClass, attributes: try state.metadata.openAttributes(row[offset + 2], .historyAttributes, identity: identity))
        if includingData {
            item.data = try SecretSealer.open(
                .init(wrappedKey: row[offset + 4], sealedData: row[offset + 5]), identity: identity,
                protectionClass: protectionClass, classKey: state.key(for: protectionClass))
        }
        return item
    }

    func insertHistory(_ db: Database, _ item: Item, versionTag: [UInt8]?, state: KeyState, recorded: Date) throws {
        let identity = Self.newIdentity()
        let protectionClass = item.accessibility.protectionClass
        let sealed = try SecretSealer.seal(
            item.data, identity: identity, protectionClass: protectionClass, classKey: state.key(for: protectionClass))
        // OR IGNORE: the same version (primary key and tag) kept again, by a replayed resolution.
        try db.cachedStatement(
            sql: """
                INSERT OR IGNORE INTO item_history
                    (identity, class, key_index, attributes, protection_class, wrapped_key, sealed_data, recorded, version_tag)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            Data(identity), item.itemClass.rawValue, try state.metadata.keyIndex(item.primaryKey),
            try state.metadata.sealAttributes(item.attributes, .historyAttributes, identity: identity),
            protectionClass.rawValue, sealed.wrappedKey, sealed.sealedData, recorded.timeIntervalSince1970, versionTag.map { Data($0) },
        ])
    }
}

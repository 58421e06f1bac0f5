import Crypto
import Foundation
import GRDB
import KeychainModel

extension Keychain {
    /// Adds an item: applies Apple's defaults, seals its data and inserts it, in one transaction.
    ///
    /// - Parameter item: The item; its data is the secret (an item without data has none).
    /// - Returns: The stored item's attributes (defaults and dates filled in), without its data.
    /// - Throws: ``KeychainStatus/duplicateItem`` when an item with the same primary key exists,
    ///   ``KeychainStatus/param`` / ``KeychainStatus/noSuchAttribute`` for invalid attributes,
    ///   ``KeychainStatus/interactionNotAllowed`` when the item's class is locked.
    @discardableResult
    public func add(_ item: Item) throws(KeychainError) -> ItemAttributes {
        try refuseIfReadOnly()
        let prepared = try ItemRules.preparedForAdd(placed(item), now: now, defaultAccessGroup: configuration.defaultAccessGroup)
        return try write { db, state in
            let identity = Self.newIdentity()
            try insert(db, prepared, identity: identity, state: state)
            if prepared.isSynchronizable {
                try appendJournal(db, identity: identity, primaryKey: prepared.primaryKey, operation: .add)
            }
            return prepared.attributes
        }
    }

    /// Throws ``KeychainStatus/readOnly`` when this keychain takes no change from its user (every
    /// change does; a caller that changes it in several steps checks before the first).
    public func refuseIfReadOnly() throws(KeychainError) {
        if let reason = configuration.refusesChanges { throw KeychainError(.readOnly, reason) }
    }

    /// `item` as this keychain stores it: synchronizable in a shared group's keychain.
    func placed(_ item: Item) -> Item {
        guard configuration.everyItemSynchronizable else { return item }
        var item = item
        item.attributes.synchronizable = true
        return item
    }

    /// The rows `query` names; in a shared group's keychain, whatever its synchronizable filter
    /// says (every item there is synchronizable).
    func itemFilter(_ query: Query, keys: MetadataKeys) -> ItemFilter {
        guard configuration.everyItemSynchronizable else { return ItemFilter(query, keys: keys) }
        var query = query
        query.attributes.synchronizable = nil
        query.synchronizable = .any
        return ItemFilter(query, keys: keys)
    }

    /// Searches for items.
    ///
    /// - Parameter query: What to match and what to return (data, attributes, persistent reference).
    /// - Returns: One result per match, at most the query's match limit.
    /// - Throws: ``KeychainStatus/itemNotFound`` when nothing matches,
    ///   ``KeychainStatus/interactionNotAllowed`` while locked (whether or not anything matches).
    public func find(_ query: Query) throws(KeychainError) -> [ItemResult] {
        try ItemRules.validate(query)
        // One SELECT reads the rows and the lock generation together; only when the generation
        // moved does the key state reload (with its own statements, in a transaction).
        return try readOneStatement { db in
            let wantsData = query.returns.contains(.data)
            let (rows, generation) = try itemFilter(query, keys: metadataKeys(db)).fetchWithGeneration(
                db, attributes: query.returns.contains(.attributes), secrets: wantsData, limit: query.rowLimit, generation: true)
            // The lock decision comes before the answer, found or not.
            let state = try currentState(db, knownGeneration: generation)
            guard state.mayTouch(query) else { throw KeychainError(.interactionNotAllowed) }
            if rows.isEmpty { throw KeychainError(.itemNotFound) }
            return try rows.map { stored in
                var result = ItemResult(itemClass: stored.itemClass)
                if query.returns.contains(.attributes) { result.attributes = stored.attributes }
                if query.returns.contains(.persistentReference) {
                    result.persistentReference = PersistentReference(rowID: stored.rowID, itemIdentity: stored.identity)
                }
                if wantsData, let sealed = stored.sealed {
                    result.data = try SecretSealer.open(
                        sealed, identity: stored.identity, protectionClass: stored.protectionClass,
                        classKey: try state.key(for: stored.protectionClass))
                }
                return result
            }
        }
    }

    /// Finds one item's secret: the fast path for `find` with return data and match limit one.
    ///
    /// - Parameter query: The filters (its limit and return types are ignored).
    /// - Returns: The first match's data.
    public func findData(_ query: Query) throws(KeychainError) -> [UInt8] {
        var single = query
        single.limit = .one
        single.returns = .data
        return try find(single)[0].data ?? []
    }

    /// Updates every match in one transaction.
    ///
    /// - Parameters:
    ///   - query: The items to change (limit and return types are ignored: every match changes).
    ///   - changes: New attribute values.
    ///   - data: A new secret, or nil to keep each item's secret.
    /// - Throws: ``KeychainStatus/itemNotFound`` when nothing matches,
    ///   ``KeychainStatus/duplicateItem`` when a change moves an item onto an existing primary key
    ///   (then nothing changes).
    public func update(_ query: Query, changes: ItemAttributes, data: [UInt8]? = nil) throws(KeychainError) {
        try ItemRules.validate(query)
        try ItemRules.validateChanges(changes, for: query.itemClass)
        try refuseIfReadOnly()
        if configuration.everyItemSynchronizable, changes.synchronizable == false {
            throw KeychainError(.param, "every item of a shared group's keychain is synchronizable")
        }
        let now = self.now
        try write { db, state in
            guard state.mayTouch(query) else { throw KeychainError(.interactionNotAllowed) }
            let rows = try itemFilter(query, keys: state.metadata).fetch(db, attributes: true, secrets: true, limit: nil)
            if rows.isEmpty { throw KeychainError(.itemNotFound) }
            for stored in rows {
                let updated = try ItemRules.updated(stored.item, changes: changes, data: data, now: now)
                try replace(db, stored, with: updated, state: state)
            }
        }
    }

    /// Deletes every match in one transaction.
    ///
    /// - Throws: ``KeychainStatus/itemNotFound`` when nothing matches.
    public func delete(_ query: Query) throws(KeychainError) {
        try ItemRules.validate(query)
        try refuseIfReadOnly()
        try write { db, state in
            guard state.mayTouch(query) else { throw KeychainError(.interactionNotAllowed) }
            let rows = try itemFilter(query, keys: state.metadata).fetch(db, attributes: true, secrets: false, limit: nil)
            if rows.isEmpty { throw KeychainError(.itemNotFound) }
            for stored in rows {
                try deleteRow(db, stored, journaled: true)
            }
        }
    }

    /// Deletes, in one transaction, the items `query` matches that have these persistent
    /// references (a search's results, confirmed before the deletion): an item that no longer
    /// matches is left, and one that came to match meanwhile is not deleted.
    ///
    /// - Returns: How many items were deleted.
    /// - Throws: ``KeychainStatus/itemNotFound`` when none of them is there any more,
    ///   ``KeychainStatus/interactionNotAllowed`` as ``delete(_:)``.
    @discardableResult
    public func delete(_ query: Query, references: [PersistentReference]) throws(KeychainError) -> Int {
        try ItemRules.validate(query)
        try refuseIfReadOnly()
        return try write { db, state in
            guard state.mayTouch(query) else { throw KeychainError(.interactionNotAllowed) }
            var deleted = 0
            for reference in references {
                var one = query
                one.persistentReference = reference
                for stored in try itemFilter(one, keys: state.metadata).fetch(db, attributes: true, secrets: false, limit: 1) {
                    try deleteRow(db, stored, journaled: true)
                    deleted += 1
                }
            }
            if deleted == 0 { throw KeychainError(.itemNotFound) }
            return deleted
        }
    }

    // MARK: - Row writes shared with the sync methods

    static func newIdentity() -> [UInt8] {
        RandomBytes(count: 16).bytes
    }

    static let insertSQL = """
        INSERT INTO item (identity, class, sync, key_index, lookup_index, pair_index, attributes, protection_class, wrapped_key, sealed_data)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """

    static let replaceSQL = """
        UPDATE item SET sync = ?, key_index = ?, lookup_index = ?, pair_index = ?, attributes = ?, protection_class = ?, wrapped_key = ?, sealed_data = ?
        WHERE id = ?
        """

    /// Inserts `item` as a new row; `keyIndex` is its primary key's index when already computed.
    func insert(_ db: Database, _ item: Item, identity: [UInt8], state: KeyState, keyIndex: Data? = nil) throws {
        let protectionClass = try checkedProtectionClass(item, state: state)
        let sealed = try SecretSealer.seal(
            item.data, identity: identity, protectionClass: protectionClass, classKey: state.key(for: protectionClass))
        var arguments: [DatabaseValue] = [Data(identity).databaseValue, item.itemClass.rawValue.databaseValue]
        arguments += try Self.metadataColumns(item, identity: identity, keys: state.metadata, keyIndex: keyIndex)
        arguments += [protectionClass.rawValue.databaseValue, sealed.wrappedKey.databaseValue, sealed.sealedData.databaseValue]
        do {
            // Bound and run directly, like lookups: the add is the other hot path.
            try RawColumns(statement: db.cachedStatement(sql: Self.insertSQL).sqliteStatement).execute(arguments, db)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            throw try duplicateError(db, primaryKey: item.primaryKey, state: state)
        }
    }

    /// The columns that stand for an item's attributes (decision 0280): whether it syncs, its
    /// blind indexes, and the attributes sealed to its row.
    static func metadataColumns(_ item: Item, identity: [UInt8], keys: MetadataKeys, keyIndex: Data? = nil) throws -> [DatabaseValue] {
        let lookup = MetadataKeys.lookupAttributes(of: item.itemClass).map { item.attributes[$0] ?? $0.emptyValue }
        return [
            Int64(item.isSynchronizable ? 1 : 0).databaseValue,
            (keyIndex ?? keys.keyIndex(item.primaryKey)).databaseValue,
            keys.lookupIndex(item.itemClass, Array(lookup.prefix(1))).databaseValue,
            keys.lookupIndex(item.itemClass, lookup).databaseValue,
            try keys.sealAttributes(item.attributes, .itemAttributes, identity: identity).databaseValue,
        ]
    }

    /// Writes `updated` over the stored row, resealing or rewrapping only when needed, and journals it.
    func replace(_ db: Database, _ stored: StoredItem, with updated: Item, state: KeyState) throws {
        let newClass = try checkedProtectionClass(updated, state: state)
        guard var sealed = stored.sealed else { throw KeychainError(.decode) }
        if let data = updated.data {
            sealed = try SecretSealer.seal(data, identity: stored.identity, protectionClass: newClass, classKey: state.key(for: newClass))
        } else if newClass != stored.protectionClass {
            sealed = try SecretSealer.reseal(
                sealed, identity: stored.identity, from: stored.protectionClass,
                oldKey: state.key(for: stored.protectionClass), to: newClass, newKey: state.key(for: newClass))
        }
        let oldKey = PrimaryKey(itemClass: stored.itemClass, attributes: stored.attributes)
        let newKey = updated.primaryKey
        var arguments = try Self.metadataColumns(updated, identity: stored.identity, keys: state.metadata)
        arguments += [newClass.rawValue.databaseValue, sealed.wrappedKey.databaseValue, sealed.sealedData.databaseValue, stored.rowID.databaseValue]
        do {
            try db.cachedStatement(sql: Self.replaceSQL).execute(arguments: StatementArguments(databaseValues: arguments))
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            throw try duplicateError(db, primaryKey: newKey, state: state)
        }
        try journalReplacement(db, identity: stored.identity, from: oldKey, to: newKey)
    }

    func deleteRow(_ db: Database, _ stored: StoredItem, journaled: Bool) throws {
        try db.cachedStatement(sql: "DELETE FROM item WHERE id = ?").execute(arguments: [stored.rowID])
        let primaryKey = PrimaryKey(itemClass: stored.itemClass, attributes: stored.attributes)
        if journaled && primaryKey.isSynchronizable {
            try appendJournal(db, identity: stored.identity, primaryKey: primaryKey, operation: .delete)
        }
    }

    private func checkedProtectionClass(_ item: Item, state: KeyState) throws(KeychainError) -> ProtectionClass {
        let protectionClass = item.accessibility.protectionClass
        if protectionClass == .whenPasscodeSet && !state.passcodeSet {
            throw KeychainError(.notAvailable, "this accessibility needs a keychain passcode")
        }
        return protectionClass
    }

    /// A duplicate, unless the keychain is locked and the existing item is of a locked class:
    /// then "interaction not allowed", so a locked item's existence is not revealed.
    private func duplicateError(_ db: Database, primaryKey: PrimaryKey, state: KeyState) throws -> KeychainError {
        if state.locked, let existing = try fetchStored(db, primaryKey: primaryKey), existing.protectionClass.isLockedWithKeychain {
            return KeychainError(.interactionNotAllowed)
        }
        return KeychainError(.duplicateItem)
    }
}

extension Keychain {
    /// The class of the item a persistent reference names, or nil when there is no such item:
    /// Apple finds an item by its reference alone, without `kSecClass`.
    public func itemClass(of reference: PersistentReference) throws(KeychainError) -> ItemClass? {
        try readOneStatement { db in
            try String.fetchOne(
                db.cachedStatement(sql: "SELECT class FROM item WHERE id = ? AND identity = ?"),
                arguments: [reference.rowID, Data(reference.itemIdentity)]
            ).flatMap(ItemClass.init(rawValue:))
        }
    }
}

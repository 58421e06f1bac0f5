import GRDB
import KeychainModel

extension Keychain {
    /// What an import did (or, in a dry run, would do).
    public struct ImportCounts: Sendable, Hashable {
        /// Items that were not in the keychain.
        public var imported = 0
        /// Items whose primary key was there, with other attributes or another secret.
        public var updated = 0
        /// Items already there exactly as imported.
        public var unchanged = 0

        /// No items yet.
        public init() {}
    }

    /// Adds `items`, or updates the item with the same primary key, all in one transaction: either
    /// every item is stored or none is. Importing the same items again updates rather than
    /// duplicates.
    ///
    /// - Parameters:
    ///   - items: The items, with their secrets.
    ///   - keepingDates: Keep the items' own creation and modification dates (a keychain's own
    ///     export); otherwise they are dated now, like an add.
    ///   - dryRun: Count only; nothing is written.
    /// - Throws: As ``add(_:)`` for an invalid item (then nothing is stored).
    public func importItems(_ items: [Item], keepingDates: Bool, dryRun: Bool = false) throws(KeychainError) -> ImportCounts {
        if !dryRun { try refuseIfReadOnly() }
        var prepared: [Item] = []
        for item in items.map(placed) {
            prepared.append(keepingDates
                ? try preparedKeepingDates(item)
                : try ItemRules.preparedForAdd(item, now: now, defaultAccessGroup: configuration.defaultAccessGroup))
        }
        let body = { (db: Database, state: KeyState) throws -> ImportCounts in
            var counts = ImportCounts()
            for item in prepared {
                guard let current = try self.fetchStored(db, primaryKey: item.primaryKey) else {
                    counts.imported += 1
                    if dryRun { continue }
                    let identity = Self.newIdentity()
                    try self.insert(db, item, identity: identity, state: state)
                    if item.isSynchronizable {
                        try self.appendJournal(db, identity: identity, primaryKey: item.primaryKey, operation: .add)
                    }
                    continue
                }
                let existing = try current.itemWithSecret(state)
                var updated = item
                if !keepingDates { updated.attributes.creationDate = existing.attributes.creationDate }
                if Self.sameContent(existing, updated) {
                    counts.unchanged += 1
                } else {
                    counts.updated += 1
                    if !dryRun { try self.replace(db, current, with: updated, state: state) }
                }
            }
            return counts
        }
        return dryRun ? try read(body) : try write(body)
    }

    /// Equal but for the modification date.
    private static func sameContent(_ left: Item, _ right: Item) -> Bool {
        var left = left
        var right = right
        left.attributes.modificationDate = nil
        right.attributes.modificationDate = nil
        return left == right
    }

    /// Every item matching the search (all classes, the given synchronizable filter) with its
    /// secret and attributes: what `keychain export` writes. Never the sync client's own secrets
    /// (``ItemRules/syncClientAccessGroup``: its account keys, device keys and token), nor any of
    /// `excludedAccessGroups`; `ThisDeviceOnly` items only when `includingThisDeviceOnly`.
    /// - Throws: ``KeychainStatus/interactionNotAllowed`` while locked.
    public func exportItems(
        synchronizable: SynchronizableMatch, includingThisDeviceOnly: Bool = false, excludedAccessGroups: [String] = []
    ) throws(KeychainError) -> [Item] {
        let excludedAccessGroups = excludedAccessGroups + [ItemRules.syncClientAccessGroup]
        var items: [Item] = []
        for itemClass in ItemClass.allCases {
            var query = Query(itemClass: itemClass, synchronizable: synchronizable, limit: .all, returns: [.attributes, .data])
            query.excludedAccessGroups = excludedAccessGroups
            do {
                items += try find(query).map { Item(itemClass: $0.itemClass, attributes: $0.attributes ?? ItemAttributes(), data: $0.data) }
            } catch where error.code == .itemNotFound {
                continue
            }
        }
        return includingThisDeviceOnly ? items : items.filter { !$0.accessibility.isThisDeviceOnly }
    }
}

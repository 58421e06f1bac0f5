import KeychainModel
import KeychainStore

extension Keychain {
    /// The item classes a keychain holds.
    private static let itemClasses: [ItemClass] = [.genericPassword, .internetPassword, .certificate, .key]

    /// The primary key and attributes of every synchronizable item, without secrets.
    ///
    /// - Throws: ``KeychainError`` when a class cannot be read (a locked keychain).
    package func synchronizableItems() throws(KeychainError) -> [(key: PrimaryKey, attributes: ItemAttributes)] {
        var items: [(key: PrimaryKey, attributes: ItemAttributes)] = []
        for itemClass in Self.itemClasses {
            let results: [ItemResult]
            do {
                results = try find(Query(itemClass: itemClass, synchronizable: .yes, limit: .all, returns: .attributes))
            } catch where error.code == .itemNotFound {
                continue
            }
            for result in results {
                guard let attributes = result.attributes else { continue }
                items.append((PrimaryKey(itemClass: itemClass, attributes: attributes), attributes))
            }
        }
        return items
    }
}

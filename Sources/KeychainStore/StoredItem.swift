import Foundation
import GRDB
import KeychainModel

/// One row of the item table as read back, with the secret still sealed.
struct StoredItem {
    var rowID: Int64
    var identity: [UInt8]
    var itemClass: ItemClass
    /// The opened attributes; empty when the row was read without opening them.
    var attributes: ItemAttributes
    var protectionClass: ProtectionClass
    var sealed: SecretSealer.SealedSecret?

    var item: Item { Item(itemClass: itemClass, attributes: attributes) }

    /// The select list: the row's columns and sealed attributes, then (optionally) secrets.
    static func selection(secrets: Bool) -> String {
        "id, identity, class, protection_class, attributes" + (secrets ? ", wrapped_key, sealed_data" : "")
    }

    /// Reads the current row of a ``selection(secrets:)``; opens its attributes when `keys` are given.
    init(_ columns: RawColumns, keys: MetadataKeys?, secrets: Bool) throws {
        rowID = columns.int64(0)
        let identity = columns.bytes(1)
        self.identity = identity
        guard let itemClass = ItemClass(rawValue: columns.text(2)), let protectionClass = ProtectionClass(rawValue: columns.text(3)) else {
            throw KeychainError(.decode, "stored item has an unknown class")
        }
        self.itemClass = itemClass
        self.protectionClass = protectionClass
        if let keys {
            attributes = try keys.openAttributes(columns.data(4), .itemAttributes, identity: identity)
        } else {
            attributes = ItemAttributes()
        }
        sealed = secrets ? SecretSealer.SealedSecret(wrappedKey: columns.data(5), sealedData: columns.data(6)) : nil
    }
}

extension StatementArguments {
    /// Positional arguments. GRDB's generic initializer over `DatabaseValueConvertible` elements
    /// builds a key path at run time on every call; this goes through its existential one.
    init(databaseValues: [DatabaseValue]) {
        self.init(databaseValues.map { $0 as (any DatabaseValueConvertible)? })
    }
}

import Foundation
import GRDB
import KeychainModel

/// One row of the item table as read back, with the secret still sealed.
struct StoredItem: Sendable {
    var rowID: Int64
    var identity: [UInt8]
    var itemClass: ItemClass
    /// The opened attributes; empty when the row was read without opening them.
    var attributes: ItemAttributes
    /// The attributes as stored, when the row was read to open them later (``opened(with:)``).
    var sealedAttributes: Data?
    var protectionClass: ProtectionClass
    var sealed: SecretSealer.SealedSecret?

    var item: Item { Item(itemClass: itemClass, attributes: attributes) }

    /// The select list: the row's columns and sealed attributes, then (optionally) secrets.
    static func selection(secrets: Bool) -> String {
        "id, identity, class, protection_class, attributes" + (secrets ? ", wrapped_key, sealed_data" : "")
    }

    /// Reads the current row of a ``selection(secrets:)``; opens its attributes when `keys` are
    /// given, or keeps them sealed with `keepingSealedAttributes`.
    init(_ columns: RawColumns, keys: MetadataKeys?, secrets: Bool, keepingSealedAttributes: Bool = false) throws {
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
            if keepingSealedAttributes { sealedAttributes = columns.data(4) }
        }
        sealed = secrets ? SecretSealer.SealedSecret(wrappedKey: columns.data(5), sealedData: columns.data(6)) : nil
    }

    /// The item with its secret opened under its class's key in `state`.
    func itemWithSecret(_ state: KeyState) throws(KeychainError) -> Item {
        var item = self.item
        if let sealed {
            item.data = try SecretSealer.open(sealed, identity: identity, protectionClass: protectionClass, classKey: state.key(for: protectionClass))
        }
        return item
    }

    /// The row with the attributes it kept sealed opened.
    func opened(with keys: MetadataKeys) throws(KeychainError) -> StoredItem {
        guard let sealedAttributes else { return self }
        var opened = self
        opened.attributes = try keys.openAttributes(sealedAttributes, .itemAttributes, identity: identity)
        opened.sealedAttributes = nil
        return opened
    }
}

extension StatementArguments {
    /// Positional arguments. GRDB's generic initializer over `DatabaseValueConvertible` elements
    /// builds a key path at run time on every call; this goes through its existential one.
    init(databaseValues: [DatabaseValue]) {
        self.init(databaseValues.map { $0 as (any DatabaseValueConvertible)? })
    }
}

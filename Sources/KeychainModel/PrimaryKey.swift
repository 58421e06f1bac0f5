/// What makes an item unique: its class and the values of its class's primary-key attributes.
///
/// ``fields`` is the stable, ordered view other modules derive identities from (the crypto module
/// turns it into an opaque item ID): first `("class", class code)`, then each attribute of
/// ``ItemClass/primaryKeyAttributes`` in that order as `(attribute code, canonical bytes)`.
/// A missing attribute counts as its empty value. The order, names and byte encodings are part of
/// the on-disk and on-wire contract and never change.
public struct PrimaryKey: Hashable, Sendable {
    /// One named field of a primary key.
    public struct Field: Hashable, Sendable {
        /// `class` or an attribute code such as `acct`.
        public let name: String
        /// The canonical bytes of the value (see ``AttributeValue/canonicalBytes``).
        public let bytes: [UInt8]
    }

    /// The item's class.
    public let itemClass: ItemClass
    /// The key attributes' values, missing ones filled with their empty values.
    public let values: [Attribute: AttributeValue]

    /// The primary key of an item of `itemClass` with `attributes`.
    public init(itemClass: ItemClass, attributes: ItemAttributes) {
        self.itemClass = itemClass
        var values: [Attribute: AttributeValue] = [:]
        for attribute in itemClass.primaryKeyAttributes {
            values[attribute] = attributes[attribute] ?? attribute.emptyValue
        }
        self.values = values
    }

    /// The ordered fields, class first (stable; see the type's documentation).
    public var fields: [Field] {
        [Field(name: "class", bytes: Array(itemClass.rawValue.utf8))]
            + itemClass.primaryKeyAttributes.map { attribute in
                Field(name: attribute.rawValue, bytes: values[attribute, default: attribute.emptyValue].canonicalBytes)
            }
    }

    /// True when the key belongs to a synchronizable item.
    public var isSynchronizable: Bool { values[.synchronizable] == .bool(true) }

    /// The key's values as attributes, for looking the item up.
    public var attributes: ItemAttributes { ItemAttributes(values) }

    /// The query that matches exactly the item with this key (at most one exists).
    public func exactQuery(returns: ReturnTypes = []) -> Query {
        Query(itemClass: itemClass, attributes: attributes, returns: returns)
    }
}

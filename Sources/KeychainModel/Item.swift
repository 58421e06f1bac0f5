/// One keychain item: its class, its attributes and its secret.
public struct Item: Hashable, Sendable {
    /// The item's class.
    public var itemClass: ItemClass
    /// The item's attributes.
    public var attributes: ItemAttributes
    /// The secret (`kSecValueData`); nil when not requested or not set.
    public var data: [UInt8]?

    /// Creates an item.
    public init(itemClass: ItemClass, attributes: ItemAttributes = ItemAttributes(), data: [UInt8]? = nil) {
        self.itemClass = itemClass
        self.attributes = attributes
        self.data = data
    }

    /// The item's primary key.
    public var primaryKey: PrimaryKey { PrimaryKey(itemClass: itemClass, attributes: attributes) }

    /// The item's accessibility, with the default applied.
    public var accessibility: Accessibility { attributes.accessible ?? .default }

    /// True when the item is synchronizable.
    public var isSynchronizable: Bool { attributes.synchronizable ?? false }

    /// A generic password item.
    public static func genericPassword(
        service: String, account: String, data: [UInt8], configure: (inout ItemAttributes) -> Void = { _ in }
    ) -> Item {
        var attributes = ItemAttributes()
        attributes.service = service
        attributes.account = account
        configure(&attributes)
        return Item(itemClass: .genericPassword, attributes: attributes, data: data)
    }
}

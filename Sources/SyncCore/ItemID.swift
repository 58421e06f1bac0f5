/// The opaque identity of an item on the server. In the product it is the hex HMAC of the item's
/// canonical primary key, so the same logical item created on two devices gets the same ID; sync
/// logic only compares IDs.
public struct ItemID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The ID's text.
    public let rawValue: String

    /// Creates an item ID from its text.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    /// Orders by the UTF-8 bytes, the same on every platform.
    public static func < (lhs: ItemID, rhs: ItemID) -> Bool {
        lhs.rawValue.utf8.lexicographicallyPrecedes(rhs.rawValue.utf8)
    }

    public var description: String { rawValue }
}

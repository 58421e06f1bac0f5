/// The opaque identity of an item on the server. In the product it is the hex HMAC of the item's
/// canonical primary key, so the same logical item created on two devices gets the same ID; sync
/// logic only compares IDs.
public struct ItemID: TextIdentifier {
    /// The ID's text.
    public let rawValue: String

    /// Creates an item ID from its text.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }
}

/// An item's opaque identity on the server: HMAC-SHA256 under the account's item-ID key over the
/// item's zone and primary key (see ``AccountKeys/itemID(zone:fields:)``). 32 bytes; its text and
/// Codable form is 64 lowercase hex digits.
public struct ItemID: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The number of bytes in an item ID.
    public static let byteCount = 32

    /// The ID's 32 bytes.
    public let bytes: [UInt8]

    /// An ID from its bytes; `nil` unless there are exactly 32.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = Array(bytes)
    }

    /// An ID from 64 hex digits; `nil` for anything else.
    public init?(hex: String) {
        guard let bytes = [UInt8](hexString: hex) else { return nil }
        self.init(bytes: bytes)
    }

    /// The ID as 64 lowercase hex digits.
    public var hex: String { bytes.hexString }

    public var description: String { hex }

    /// Decodes an ID from its hex string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        guard let id = ItemID(hex: try container.decode(String.self)) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "invalid item ID")
        }
        self = id
    }

    /// Encodes the ID as its hex string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }
}

/// Bytes carried in JSON as a standard base64 string (RFC 4648, with padding): blobs, salts,
/// wrapped keys and auth keys.
public struct Base64Bytes: Hashable, Sendable, Codable, ExpressibleByArrayLiteral {
    /// The bytes.
    public var bytes: [UInt8]

    /// Wraps `bytes`.
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Wraps the literal bytes.
    public init(arrayLiteral elements: UInt8...) {
        self.bytes = elements
    }

    /// Decodes a base64 string; anything else is a `DecodingError`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        guard let bytes = Base64.decode(try container.decode(String.self)) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not valid base64")
        }
        self.bytes = bytes
    }

    /// Encodes as a base64 string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Base64.encode(bytes))
    }
}

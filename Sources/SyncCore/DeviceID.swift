/// The identity of one device in an account's version vectors.
///
/// A device ID is chosen by the device at enrolment (random, so no coordination is needed) and is
/// 1...64 bytes of `[A-Za-z0-9_-]`. Conflict resolution breaks modification-time ties by comparing
/// device IDs bytewise, so every device reaches the same order.
public struct DeviceID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The longest device ID accepted, in bytes.
    public static let maximumLength = 64

    /// The ID's text, ASCII only.
    public let rawValue: String

    /// Creates a device ID, or returns `nil` when `rawValue` is empty, too long, or has a character
    /// outside `[A-Za-z0-9_-]`.
    public init?(_ rawValue: String) {
        let bytes = Array(rawValue.utf8)
        guard (1...Self.maximumLength).contains(bytes.count), bytes.allSatisfy(Self.isAllowed) else {
            return nil
        }
        self.rawValue = rawValue
    }

    /// A new random device ID: 16 random bytes as 32 lowercase hex digits.
    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> DeviceID {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(32)
        for _ in 0..<16 {
            let byte = UInt8.random(in: .min ... .max, using: &generator)
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return DeviceID(unchecked: String(decoding: text, as: UTF8.self))
    }

    /// A new random device ID from the system's random number generator.
    public static func random() -> DeviceID {
        var generator = SystemRandomNumberGenerator()
        return random(using: &generator)
    }

    /// Orders by the UTF-8 bytes, the same on every platform and locale.
    public static func < (lhs: DeviceID, rhs: DeviceID) -> Bool {
        lhs.rawValue.utf8.lexicographicallyPrecedes(rhs.rawValue.utf8)
    }

    public var description: String { rawValue }

    init(unchecked rawValue: String) {
        self.rawValue = rawValue
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default:
            false
        }
    }
}

extension DeviceID: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let id = DeviceID(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "invalid device ID")
        }
        self = id
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

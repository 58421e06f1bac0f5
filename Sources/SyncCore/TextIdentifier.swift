/// An identifier that is its text (``ItemID``, ``ZoneID``): ordered by its UTF-8 bytes, coded as
/// the text (the wire's form), and written as a literal for fixed names and tests. Its initialiser
/// checks nothing, so a literal adds no unchecked path (decision 0254).
public protocol TextIdentifier: Hashable, Comparable, Sendable, Codable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The identifier's text.
    var rawValue: String { get }

    /// Creates the identifier from its text.
    init(_ rawValue: String)
}

private enum EarlierCodingKeys: String, CodingKey { case rawValue }

extension TextIdentifier {
    /// Creates the identifier from a literal.
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// Reads the text; also the `{"rawValue": …}` object that the synthesized coding of builds
    /// before decision 0254 wrote into sync state files.
    public init(from decoder: any Decoder) throws {
        if let container = try? decoder.singleValueContainer(), let text = try? container.decode(String.self) {
            self.init(text)
        } else {
            self.init(try decoder.container(keyedBy: EarlierCodingKeys.self).decode(String.self, forKey: .rawValue))
        }
    }

    /// Writes the text.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// Orders by the UTF-8 bytes, the same on every platform.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.rawValue.utf8.lexicographicallyPrecedes(rhs.rawValue.utf8)
    }

    public var description: String { rawValue }
}

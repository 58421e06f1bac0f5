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

    /// Orders by the UTF-8 bytes, the same on every platform; compared in place when both are
    /// stored contiguously (native strings are), a third faster than through the views' iterators:
    /// every push sorts the items waiting for it (issue 35).
    public static func < (lhs: Self, rhs: Self) -> Bool {
        let inPlace = lhs.rawValue.utf8.withContiguousStorageIfAvailable { left in
            rhs.rawValue.utf8.withContiguousStorageIfAvailable { right in
                for (l, r) in zip(left, right) where l != r { return l < r }
                return left.count < right.count
            }
        }
        return (inPlace ?? nil) ?? lhs.rawValue.utf8.lexicographicallyPrecedes(rhs.rawValue.utf8)
    }

    public var description: String { rawValue }
}

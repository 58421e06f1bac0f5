/// The one error type of the key-value store: a code, a message and the underlying error.
///
/// Messages never contain values; they name a limit and its numbers, never a key's contents.
public struct KeyValueStoreError: Error, Sendable, CustomStringConvertible {
    /// What went wrong; extensible, compare with the static members.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name.
        public let rawValue: String

        /// A key is empty or not valid.
        public static let invalidKey = Code(rawValue: "invalidKey")
        /// A key is longer than ``KeyValueLimits/maximumKeyBytes`` bytes of UTF-8.
        public static let keyTooLong = Code(rawValue: "keyTooLong")
        /// A value's encoding is larger than ``KeyValueLimits/maximumValueBytes``.
        public static let valueTooLarge = Code(rawValue: "valueTooLarge")
        /// The write would give the store more than ``KeyValueLimits/maximumKeys`` keys.
        public static let tooManyKeys = Code(rawValue: "tooManyKeys")
        /// The write would make the store larger than ``KeyValueLimits/maximumStoreBytes``.
        public static let storeTooLarge = Code(rawValue: "storeTooLarge")
        /// A value nests arrays and dictionaries deeper than ``KeyValue/maximumNestingDepth``.
        public static let nestedTooDeeply = Code(rawValue: "nestedTooDeeply")
        /// A value is or holds a double that is NaN or infinite: JSON cannot carry it, and no
        /// preference means it.
        public static let nonFiniteNumber = Code(rawValue: "nonFiniteNumber")
        /// A store name is empty, too long or holds control characters.
        public static let invalidStoreName = Code(rawValue: "invalidStoreName")
        /// There is no value for the key (used by callers that require one, such as the CLI).
        public static let keyNotFound = Code(rawValue: "keyNotFound")
        /// A stored or synced value cannot be decoded.
        public static let corruptValue = Code(rawValue: "corruptValue")
        /// The database cannot be opened, read or written.
        public static let storage = Code(rawValue: "storage")

        public var description: String { rawValue }
    }

    /// What went wrong.
    public var code: Code
    /// A one-line explanation for people, free of values.
    public var message: String
    /// The cause, if any (a database or file-system error).
    public var underlying: (any Error & Sendable)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    public var description: String { "\(message) (\(code))" }
}

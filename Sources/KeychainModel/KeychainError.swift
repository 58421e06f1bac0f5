/// The one error type of the keychain: a status code, a message and the underlying error.
///
/// Messages never contain secrets, item data, keys or SQL arguments; they may name attributes.
public struct KeychainError: Error, Sendable, CustomStringConvertible {
    /// The status, with Apple's numeric value.
    public var code: KeychainStatus
    /// A one-line explanation for people, free of item contents.
    public var message: String
    /// The error that caused this one, if any (a database or file-system error).
    public var underlying: (any Error & Sendable)?

    /// Creates an error.
    /// - Parameters:
    ///   - code: The status code.
    ///   - message: A one-line explanation; defaults to the status's name.
    ///   - underlying: The cause, if any.
    public init(_ code: KeychainStatus, _ message: String? = nil, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message ?? code.name
        self.underlying = underlying
    }

    public var description: String { "\(message) (\(code.rawValue))" }
}

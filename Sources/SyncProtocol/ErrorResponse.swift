/// The body of every error answer: `{"error": {"code": "stable_code", "message": "..."}}`.
public struct ErrorResponse: Hashable, Sendable, Codable {
    /// The error itself.
    public struct Detail: Hashable, Sendable, Codable {
        /// A stable machine-readable code (see `ErrorCode`).
        public var code: String
        /// A human-readable explanation; never contains secrets or request data.
        public var message: String

        /// Creates a detail.
        public init(code: String, message: String) {
            self.code = code
            self.message = message
        }
    }

    /// The error.
    public var error: Detail

    /// Creates an error body.
    public init(code: String, message: String) {
        self.error = Detail(code: code, message: message)
    }
}

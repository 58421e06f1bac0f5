import SyncCore

/// The body of every error answer: `{"error": {"code": "stable_code", "message": "...", "items": [...]}}`.
public struct ErrorResponse: Hashable, Sendable, Codable {
    /// The error itself.
    public struct Detail: Hashable, Sendable, Codable {
        /// A stable machine-readable code (see `ErrorCode`).
        public var code: String
        /// A human-readable explanation; never contains secrets or request data.
        public var message: String
        /// When an upload is refused because of specific items (`too_large`: a blob over the size
        /// limit; `quota_exceeded`: items that would add to the account's usage; `too_many_siblings`),
        /// their IDs. Nothing of the batch was written: without these items it can be pushed again.
        /// Absent when the refusal is about the request as a whole.
        public var items: [ItemID]?

        /// Creates a detail.
        public init(code: String, message: String, items: [ItemID]? = nil) {
            self.code = code
            self.message = message
            self.items = items
        }
    }

    /// The error.
    public var error: Detail

    /// Creates an error body.
    public init(code: String, message: String, items: [ItemID]? = nil) {
        self.error = Detail(code: code, message: message, items: items)
    }
}

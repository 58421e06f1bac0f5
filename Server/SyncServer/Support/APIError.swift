import Foundation
import Hummingbird
import SyncCore
import SyncProtocol

/// An error answer with a stable code: thrown by routes, rendered by ``ErrorMiddleware`` as
/// `{"error": {"code": ..., "message": ..., "items": [...]}}`. Messages never echo request data.
struct APIError: Error, Sendable {
    var status: HTTPResponse.Status
    var code: String
    var message: String
    /// The item IDs a per-item refusal is about (`too_large`, `quota_exceeded`, `too_many_siblings`).
    var items: [ItemID]?
    /// Seconds after which a refused request may be tried again (`Retry-After`, on 429 answers).
    var retryAfter: Int?

    init(_ status: HTTPResponse.Status, _ code: String, _ message: String, items: [ItemID]? = nil, retryAfter: Int? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.items = items
        self.retryAfter = retryAfter
    }

    static func invalid(_ message: String) -> APIError { APIError(.badRequest, ErrorCode.invalidField, message) }
    static func tooLarge(_ message: String) -> APIError { APIError(.contentTooLarge, ErrorCode.tooLarge, message) }
    static let unauthorized = APIError(.unauthorized, ErrorCode.unauthorized, "a valid bearer token is required")
    static let signInFailed = APIError(.unauthorized, ErrorCode.signInFailed, "account name or auth key is wrong")
    static func rateLimited(retryAfter: Int, _ message: String = "too many sign-in attempts; retry later") -> APIError {
        APIError(.tooManyRequests, ErrorCode.rateLimited, message, retryAfter: retryAfter)
    }
    static func tokenRateLimited(retryAfter: Int) -> APIError {
        rateLimited(retryAfter: retryAfter, "too many requests with an invalid bearer token; retry later")
    }
    static let notFound = APIError(.notFound, ErrorCode.notFound, "no such resource")
    static let accountDisabled = APIError(.forbidden, ErrorCode.accountDisabled, "the account is disabled by the server's operator")
}

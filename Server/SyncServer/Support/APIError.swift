import Foundation
import Hummingbird
import SyncProtocol

/// An error answer with a stable code: thrown by routes, rendered by ``ErrorMiddleware`` as
/// `{"error": {"code": ..., "message": ..., "items": [...]}}`. Messages never echo request data.
struct APIError: Error, Sendable {
    var status: HTTPResponse.Status
    var code: String
    var message: String
    /// The item IDs a per-item refusal is about (`too_large`, `quota_exceeded`, `too_many_siblings`).
    var items: [String]?

    init(_ status: HTTPResponse.Status, _ code: String, _ message: String, items: [String]? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.items = items
    }

    static func invalid(_ message: String) -> APIError { APIError(.badRequest, ErrorCode.invalidField, message) }
    static func tooLarge(_ message: String) -> APIError { APIError(.contentTooLarge, ErrorCode.tooLarge, message) }
    static let unauthorized = APIError(.unauthorized, ErrorCode.unauthorized, "a valid bearer token is required")
    static let signInFailed = APIError(.unauthorized, ErrorCode.signInFailed, "account name or auth key is wrong")
    static let rateLimited = APIError(.tooManyRequests, ErrorCode.rateLimited, "too many sign-in attempts; retry later")
    static let tokenRateLimited = APIError(
        .tooManyRequests, ErrorCode.rateLimited, "too many requests with an invalid bearer token; retry later")
    static let notFound = APIError(.notFound, ErrorCode.notFound, "no such resource")
}

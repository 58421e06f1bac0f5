import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import SyncProtocol

/// Turns every error into a JSON error answer with a stable code: malformed input is a 4xx, only a
/// storage failure is a 503, and nothing leaks request data.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let answer = Self.answer(for: error)
            if answer.status.code >= 500 {
                context.logger.error("request failed", metadata: ["code": "\(answer.code)", "error": "\(Self.describe(error))"])
            }
            var response = JSONBody.response(ErrorResponse(code: answer.code, message: answer.message, items: answer.items), status: answer.status)
            if let seconds = answer.retryAfter { response.headers[.retryAfter] = String(seconds) }
            return response
        }
    }

    static func answer(for error: any Error) -> APIError {
        switch error {
        case let error as APIError:
            return error
        case let error as SyncServerError:
            switch error.code {
            case .accountExists: return APIError(.conflict, ErrorCode.accountExists, "an account with that name exists")
            case .notFound: return .notFound
            case .quotaExceeded:
                return APIError(.conflict, ErrorCode.quotaExceeded, error.message, items: error.items.isEmpty ? nil : error.items)
            case .tooManySiblings:
                return APIError(.conflict, ErrorCode.tooManySiblings, error.message, items: error.items.isEmpty ? nil : error.items)
            case .logConflict: return APIError(.conflict, ErrorCode.logConflict, error.message)
            case .deviceIDTaken: return APIError(.conflict, ErrorCode.deviceIDTaken, error.message)
            case .deviceRevoked: return APIError(.forbidden, ErrorCode.deviceRevoked, error.message)
            case .cursorExpired: return APIError(.gone, ErrorCode.cursorExpired, "the cursor is below the zone's horizon; reconcile in full")
            default: return APIError(.serviceUnavailable, ErrorCode.unavailable, "the server cannot serve this now")
            }
        case is DecodingError:
            return APIError(.badRequest, ErrorCode.malformedRequest, "the body is not the JSON this endpoint expects")
        case is NIOTooManyBytesError:
            return .tooLarge("the request body is too large")
        case is HTTPParserError:
            // The body broke HTTP/1.1 framing (a bad chunk) while a route read it.
            return APIError(.badRequest, ErrorCode.malformedRequest, "the request is not HTTP/1.1")
        case let error as HTTPError:
            switch error.status {
            case .notFound: return .notFound
            case .methodNotAllowed: return APIError(.methodNotAllowed, ErrorCode.methodNotAllowed, "method not allowed")
            case .contentTooLarge: return .tooLarge("the request body is too large")
            case let status where (400..<500).contains(status.code):
                return APIError(status, ErrorCode.malformedRequest, "the request is malformed")
            default:
                return APIError(.serviceUnavailable, ErrorCode.unavailable, "the server cannot serve this now")
            }
        default:
            return APIError(.internalServerError, "internal", "internal error")
        }
    }

    /// A loggable description: codes and types only, never values.
    static func describe(_ error: any Error) -> String {
        if let error = error as? SyncServerError {
            return error.underlying.map { "\(error.description) (\(type(of: $0)))" } ?? error.description
        }
        return String(describing: type(of: error))
    }
}

import Hummingbird
import SyncProtocol

/// Requires `Authorization: Bearer <token>` of an active device and puts the device in the context.
/// Failures count against the client address's budget (``RateLimiter``); an address over it
/// gets `429 rate_limited` without a lookup.
struct Authenticator: RouterMiddleware {
    let storage: any ServerStorage
    let rateLimiter: RateLimiter

    func handle(
        _ request: Request, context: SyncRequestContext, next: (Request, SyncRequestContext) async throws -> Response
    ) async throws -> Response {
        var context = context
        context.device = try await device(for: request.headers[.authorization], from: context.addressKey)
        return try await next(request, context)
    }

    /// The active device the header's token belongs to: `429 rate_limited` without a lookup when
    /// `address` is over its budget of failures, `401 unauthorized` (counted) when there is none.
    func device(for header: String?, from address: AddressKey) async throws -> DeviceRecord {
        guard !rateLimiter.isTokenBlocked(address) else { throw APIError.tokenRateLimited(retryAfter: rateLimiter.tokenRetryAfter(address)) }
        let device: DeviceRecord
        do {
            device = try await Self.device(for: header, in: storage)
        } catch let error as APIError where error.code == ErrorCode.unauthorized {
            rateLimiter.recordTokenFailure(address)
            throw error
        }
        // Read on every request from the shared database, so `admin disable` takes effect at once
        // on every process (decision 0152).
        guard try await !storage.isDisabled(device.account) else { throw APIError.accountDisabled }
        return device
    }

    /// The active device the header's token belongs to; `401 unauthorized` otherwise (uncounted).
    private static func device(for header: String?, in storage: any ServerStorage) async throws -> DeviceRecord {
        guard let header, header.count > 7, header.prefix(7).lowercased() == "bearer ",
            let hash = DeviceToken.hash(header.dropFirst(7)),
            let device = try await storage.device(tokenHash: hash)
        else { throw APIError.unauthorized }
        return device
    }
}

import Hummingbird

/// Requires `Authorization: Bearer <token>` of an active device and puts the device in the context.
struct Authenticator: RouterMiddleware {
    let storage: any ServerStorage

    func handle(
        _ request: Request, context: SyncRequestContext, next: (Request, SyncRequestContext) async throws -> Response
    ) async throws -> Response {
        var context = context
        context.device = try await Self.device(for: request.headers[.authorization], in: storage)
        return try await next(request, context)
    }

    /// The active device the header's token belongs to; `401 unauthorized` otherwise.
    static func device(for header: String?, in storage: any ServerStorage) async throws -> DeviceRecord {
        guard let header, header.count > 7, header.prefix(7).lowercased() == "bearer ",
            let hash = DeviceToken.hash(header.dropFirst(7)),
            let device = try await storage.device(tokenHash: hash)
        else { throw APIError.unauthorized }
        return device
    }
}

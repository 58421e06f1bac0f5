import Hummingbird
import SyncCore
import SyncProtocol

/// The account's authenticated state (decision 0120): the device log and the devices' signed zone
/// statements. The server stores and orders them; it cannot read, sign or forge them, and devices
/// verify everything it serves.
struct AccountStateRoutes {
    let storage: any ServerStorage
    let configuration: ServerConfiguration
    let clock: ServerClock

    func register(on group: RouterGroup<SyncRequestContext>) {
        group.get("/v1/device-log") { request, context in try await deviceLog(request, context) }
        group.post("/v1/device-log") { request, context in try await append(request, context) }
        // A zone of the caller's account, or of a shared group (decision 0290).
        for prefix in ["/v1/zones/:zone", "/v1/groups/:group/zones/:zone"] {
            group.get("\(prefix)/statements") { _, context in try await statements(context) }
            group.put("\(prefix)/statement") { request, context in try await publish(request, context) }
        }
        group.put("/v1/identity") { request, context in try await publishIdentity(request, context) }
        group.post("/v1/identities/lookup") { request, context in try await lookUpIdentity(request, context) }
    }

    private func deviceLog(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        return try await LogPage.response(request, page: AccountStateLimits.maximumLogPage) { from, limit in
            try await storage.deviceLog(of: device.account, from: from, limit: limit)
        }
    }

    private func append(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        let body = try await JSONBody.decode(DeviceLogAppendRequest.self, from: request, limit: configuration.limits.maximumRequestBytes)
        try Validation.deviceLogAppend(body)
        try await storage.appendDeviceLogEntry(body.entry.bytes, at: body.index, of: device.account, now: clock.now())
        context.logger.info("device log appended", metadata: ["account": "\(device.account)", "index": "\(body.index)"])
        return Response(status: .noContent)
    }

    private func statements(_ context: SyncRequestContext) async throws -> Response {
        let device = try await context.zoneCaller(storage: storage, now: clock.now())
        let zone = try context.zone()
        let statements = try await storage.statements(zone: zone, of: device.account).map {
            StatementMessage(device: $0.device, statement: Base64Bytes($0.statement))
        }
        let limit = configuration.deviceInactivityLimit.components
        let milliseconds = limit.seconds * 1000 + limit.attoseconds / 1_000_000_000_000_000
        return JSONBody.response(StatementListResponse(statements: statements, deviceInactivityLimit: milliseconds))
    }

    private func publish(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let device = try await context.zoneCaller(storage: storage, now: clock.now())
        let zone = try context.zone()
        let body = try await JSONBody.decode(StatementRequest.self, from: request, limit: configuration.limits.maximumRequestBytes)
        try Validation.statement(body)
        try await storage.publishStatement(body.statement.bytes, zone: zone, device: device.id, of: device.account, now: clock.now())
        return Response(status: .noContent)
    }

    private func publishIdentity(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        let body = try await JSONBody.decode(IdentityCardMessage.self, from: request, limit: configuration.limits.maximumRequestBytes)
        try Validation.identityCard(body)
        try await storage.publishIdentityCard(body.card.bytes, of: device.account, now: clock.now())
        return Response(status: .noContent)
    }

    /// Any enrolled device may read any account's card: a contact's is fetched by name. No such
    /// account and no card answer the same.
    private func lookUpIdentity(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        _ = try context.requireDevice()
        let body = try await JSONBody.decode(IdentityLookupRequest.self, from: request, limit: configuration.limits.maximumRequestBytes)
        try Validation.accountName(body.account)
        guard let account = try await storage.account(named: body.account), let card = try await storage.identityCard(of: account.id) else {
            throw APIError(.notFound, ErrorCode.notFound, "no account of that name has published an identity")
        }
        return JSONBody.response(IdentityCardMessage(card: Base64Bytes(card)))
    }
}

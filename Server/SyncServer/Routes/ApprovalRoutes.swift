import Foundation
import Hummingbird
import SyncCore
import SyncProtocol

/// Approval requests (decisions 0130, 0133, 0271): a device signed in with the password posts a
/// request (its commitment), another device of the account offers its part, the asking device
/// reveals its own, and the approver answers with the account key sealed to the asking device.
/// The server relays bytes it cannot read; what makes the answer trustworthy is the code the user
/// compares on both devices and the approver's signature the code binds.
struct ApprovalRoutes {
    let storage: any ServerStorage
    let configuration: ServerConfiguration
    let clock: ServerClock

    func register(on group: RouterGroup<SyncRequestContext>) {
        group.post("/v1/approval-requests") { request, context in try await create(request, context) }
        group.get("/v1/approval-requests") { _, context in try await list(context) }
        group.get("/v1/approval-requests/:id") { _, context in try await read(context) }
        group.put("/v1/approval-requests/:id/offer") { request, context in try await offer(request, context) }
        group.put("/v1/approval-requests/:id/reveal") { request, context in try await reveal(request, context) }
        group.put("/v1/approval-requests/:id/response") { request, context in try await answer(request, context) }
    }

    private func create(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        let body = try await JSONBody.decode(ApprovalRequestCreate.self, from: request, limit: configuration.limits.maximumRequestBytes)
        try Validation.approvalRequest(body)
        let id = Self.newID()
        try await storage.createApprovalRequest(
            ApprovalRecord(id: id, account: device.account, device: device.id, request: body.request.bytes, createdAt: clock.now()),
            now: clock.now())
        context.logger.info("approval requested", metadata: ["account": "\(device.account)", "device": "\(device.id)"])
        return JSONBody.response(ApprovalRequestCreated(id: id), status: .created)
    }

    private func list(_ context: SyncRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        let open = try await storage.approvalRequests(of: device.account, now: clock.now()).filter { $0.response == nil }
        return JSONBody.response(ApprovalRequestList(requests: open.map(Self.message)))
    }

    private func read(_ context: SyncRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        let id = try Self.id(context)
        guard let found = try await storage.approvalRequests(of: device.account, now: clock.now()).first(where: { $0.id == id }) else {
            throw APIError.notFound
        }
        return JSONBody.response(Self.message(found))
    }

    private func offer(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        try await record(
            request, context, ApprovalOfferRequest.self, \.offer, what: "an approval offer", maximum: ApprovalRules.maximumRequestBytes,
            missing: "open to an offer: offered or answered already, expired, never made, or your own"
        ) { id, device, bytes in
            try await storage.offerApprovalRequest(id, of: device.account, by: device.id, offer: bytes, now: clock.now())
        }
    }

    private func reveal(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        try await record(
            request, context, ApprovalRevealRequest.self, \.reveal, what: "an approval reveal", maximum: ApprovalRules.maximumRequestBytes,
            missing: "of this device waiting for its reveal: none offered yet, revealed already, or expired"
        ) { id, device, bytes in
            try await storage.revealApprovalRequest(id, of: device.account, by: device.id, reveal: bytes, now: clock.now())
        }
    }

    private func answer(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        try await record(
            request, context, ApprovalResponseRequest.self, \.response, what: "an approval answer", maximum: ApprovalRules.maximumResponseBytes,
            missing: "open: answered already, expired, or never made"
        ) { id, device, bytes in
            try await storage.answerApprovalRequest(id, of: device.account, response: bytes, now: clock.now())
        }
    }

    /// One step of an approval (decision 0271): the body's bytes, bounded, stored by `store`, which
    /// answers false when the request is not in the state the step needs (`missing` says which).
    private func record<Body: Decodable & Sendable>(
        _ request: Request, _ context: SyncRequestContext, _ type: Body.Type, _ field: KeyPath<Body, Base64Bytes>, what: String, maximum: Int,
        missing: String, store: (String, DeviceRecord, [UInt8]) async throws -> Bool
    ) async throws -> Response {
        let device = try context.requireDevice()
        let id = try Self.id(context)
        let bytes = try await JSONBody.decode(type, from: request, limit: configuration.limits.maximumRequestBytes)[keyPath: field].bytes
        guard (1...maximum).contains(bytes.count) else { throw APIError.invalid("\(what) must hold 1 to \(maximum) bytes") }
        guard try await store(id, device, bytes) else {
            throw APIError(.notFound, ErrorCode.notFound, "no approval request \(id) \(missing)")
        }
        context.logger.info("\(what) recorded", metadata: ["account": "\(device.account)", "device": "\(device.id)"])
        return Response(status: .noContent)
    }

    private static func message(_ record: ApprovalRecord) -> ApprovalRequestMessage {
        ApprovalRequestMessage(
            id: record.id, device: record.device, request: Base64Bytes(record.request), offer: record.offer.map(Base64Bytes.init),
            reveal: record.reveal.map(Base64Bytes.init), response: record.response.map(Base64Bytes.init))
    }

    /// Eight characters a user can type: 40 random bits in lower-case base 32.
    private static func newID() -> String {
        let alphabet = Array("abcdefghijkmnpqrstuvwxyz23456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<8).map { _ in alphabet[Int(generator.next(upperBound: UInt32(alphabet.count)))] })
    }

    private static func id(_ context: SyncRequestContext) throws -> String {
        let id = context.parameters.get("id") ?? ""
        guard (1...32).contains(id.utf8.count), id.utf8.allSatisfy({ $0.isASCIIAlphanumeric }) else {
            throw APIError.invalid("not an approval request ID")
        }
        return id
    }
}

private extension UInt8 {
    var isASCIIAlphanumeric: Bool { (48...57).contains(self) || (65...90).contains(self) || (97...122).contains(self) }
}

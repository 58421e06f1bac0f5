import Hummingbird
import SyncCore
import SyncProtocol

/// The change feed, batch upload and acknowledgement of one zone: of the caller's account
/// (`/v1/zones/…`), or of a shared group the caller's account is a current member of
/// (`/v1/groups/{group}/zones/…`), stored under the group's hidden account (decision 0290) and
/// served by the same code.
struct ZoneRoutes {
    let storage: any ServerStorage
    let configuration: ServerConfiguration
    let clock: ServerClock
    let metrics: ServerMetrics

    func register(on group: RouterGroup<SyncRequestContext>) {
        for prefix in ["/v1/zones/:zone", "/v1/groups/:group/zones/:zone"] {
            group.get("\(prefix)/changes") { request, context in try await changes(request, context) }
            group.post("\(prefix)/items") { request, context in try await upload(request, context) }
            group.post("\(prefix)/acknowledge") { request, context in try await acknowledge(request, context) }
        }
    }

    private var limits: ServerConfiguration.Limits { configuration.limits }

    private func changes(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let device = try await context.zoneCaller(storage: storage, now: clock.now())
        let zone = try context.zone()
        let query = request.uri.queryParameters
        let after = try Self.parameter(query.get("after"), "after must be a cursor", Self.sequence) ?? 0
        let limit = try Self.parameter(query.get("limit"), "limit must be a positive integer") { Int($0).flatMap { $0 >= 1 ? $0 : nil } }
            .map { min($0, limits.maximumPageItems) } ?? limits.maximumPageItems
        let resync = try Self.parameter(query.get("resync"), "resync must be true or false") { Bool($0) } ?? false
        let collected = try Self.parameter(query.get("collected"), "collected must be true or false") { Bool($0) } ?? false
        let told = try Self.parameter(query.get("told"), "told must be a sequence", Self.sequence) ?? 0
        // Asking for changes after a cursor says everything up to it is applied: the storage records
        // it in the transaction that serves the page (decision 0102).
        let feed = try await storage.changes(
            ChangeQuery(
                account: device.account, zone: zone, after: after, told: told, limit: limit, maximumBytes: limits.maximumPageBytes, fullResync: resync,
                includesCollectedDeletions: collected, device: device.id, now: clock.now()))
        switch feed {
        case .cursorExpired:
            throw APIError(.gone, ErrorCode.cursorExpired, "the cursor can no longer be served; reconcile in full with resync=true")
        case .restored:
            throw APIError(
                .gone, ErrorCode.feedRestored,
                "the server was restored from a backup older than this cursor; reconcile in full with resync=true and upload again what it no longer lists")
        case .page(let page):
            let items = page.items.map { item in
                FeedItem(
                    id: item.item, sequence: item.sequence,
                    versions: item.versions.map { WireVersion(vector: $0.vector, deleted: $0.isDeleted, blob: Base64Bytes($0.payload)) })
            }
            return JSONBody.response(ChangesResponse(
                after: after, resync: resync, collected: collected, items: items, cursor: page.cursor, hasMore: page.hasMore, deletionsCollectedAt: page.deletionsCollectedAtMilliseconds))
        }
    }

    /// A sequence number as the storages keep it (a signed 64-bit integer, never negative).
    private static func sequence(_ text: String) -> UInt64? {
        UInt64(text).flatMap { $0 <= UInt64(Int64.max) ? $0 : nil }
    }

    /// A query parameter parsed by `parse`: nil when absent, `400 invalid_field` when unparsable.
    private static func parameter<T>(_ text: String?, _ message: String, _ parse: (String) -> T?) throws -> T? {
        guard let text else { return nil }
        guard let value = parse(text) else { throw APIError.invalid(message) }
        return value
    }

    private func upload(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let device = try await context.zoneCaller(storage: storage, now: clock.now())
        // A courtesy, not a trust decision: what devices accept is the group log's to say (0283).
        guard !device.isViewer else { throw APIError(.forbidden, ErrorCode.viewerCannotWrite, "a viewer of the group cannot write to its zones") }
        let zone = try context.zone()
        let body = try await JSONBody.decode(UploadRequest.self, from: request, limit: limits.maximumRequestBytes)
        try Validation(limits: limits).upload(body)
        let batch = UploadBatch(
            account: device.account, device: device.id, zone: zone, cursor: body.cursor,
            items: body.items.map { .init(key: $0.id, version: SealedVersion(vector: $0.vector, isDeleted: $0.deleted, payload: $0.blob.bytes)) })
        let receipt = try await storage.upload(
            batch,
            limits: UploadLimits(
                maximumItemsPerAccount: limits.maximumItemsPerAccount, maximumBytesPerAccount: limits.maximumBytesPerAccount,
                maximumSiblings: limits.maximumSiblings),
            now: clock.now())
        metrics.record(receipt)
        return JSONBody.response(UploadResponse(
            results: receipt.results.map { .init(id: $0.id, outcome: $0.outcome, sequence: $0.sequence) },
            latestSequence: receipt.latestSequence))
    }

    private func acknowledge(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let device = try await context.zoneCaller(storage: storage, now: clock.now())
        let zone = try context.zone()
        let body = try await JSONBody.decode(AcknowledgeRequest.self, from: request, limit: limits.maximumRequestBytes)
        try await storage.acknowledge(device: device.id, of: device.account, zone: zone, through: body.cursor, now: clock.now())
        return Response(status: .noContent)
    }
}

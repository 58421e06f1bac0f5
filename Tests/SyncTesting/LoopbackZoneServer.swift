import Foundation
import SyncClient
import SyncCore
import SyncServer

/// A ``ZoneServer`` that calls a server storage in the same process instead of the HTTP
/// endpoints: the same storage, batch rule and feed the routes use, without sockets, TLS or JSON.
/// The zone driver cannot tell it from ``ZoneTransport``: refusals, expired cursors and a
/// restored feed come back as the same answers. A fault hook can lose a request before the
/// storage sees it, or its answer after the storage committed it.
package struct LoopbackZoneServer: ZoneServer {
    /// Where a call is when the fault hook runs.
    package enum Stage: Sendable {
        /// Before the storage sees the request: throwing loses the request.
        case request
        /// After the storage committed it: throwing loses the answer.
        case answer
    }

    /// A request of the driver.
    package enum Call: Sendable {
        case push, pull, acknowledge
    }

    /// The error a fault throws: what a dropped connection looks like to the driver.
    package struct Lost: Error {
        package init() {}
    }

    package let storage: any ServerStorage
    package let account: AccountID
    package let device: DeviceID
    package let zone: ZoneID
    package let limits: UploadLimits
    /// The most items and bytes of a page the server serves.
    package let pageItems: Int
    package let pageBytes: Int
    /// The server's clock and the device's.
    package let serverNow: @Sendable () -> Date
    package let deviceNow: @Sendable () -> Date
    package let fault: @Sendable (Call, Stage) throws -> Void
    /// Sees every batch the storage committed, with its answer (before the answer may be lost).
    package let observe: @Sendable (PushBatch<SealedVersion>, PushResponse) -> Void

    package init(
        storage: any ServerStorage, account: AccountID, device: DeviceID, zone: ZoneID,
        limits: UploadLimits = UploadLimits(maximumItemsPerAccount: 100_000), pageItems: Int = 1_000, pageBytes: Int = 4 << 20,
        serverNow: @escaping @Sendable () -> Date = { Date() }, deviceNow: @escaping @Sendable () -> Date = { Date() },
        fault: @escaping @Sendable (Call, Stage) throws -> Void = { _, _ in },
        observe: @escaping @Sendable (PushBatch<SealedVersion>, PushResponse) -> Void = { _, _ in }
    ) {
        self.storage = storage
        self.account = account
        self.device = device
        self.zone = zone
        self.limits = limits
        self.pageItems = pageItems
        self.pageBytes = pageBytes
        self.serverNow = serverNow
        self.deviceNow = deviceNow
        self.fault = fault
        self.observe = observe
    }

    package func push(_ batch: PushBatch<SealedVersion>) async throws -> PushResponse {
        try fault(.push, .request)
        let upload = UploadBatch(
            account: account, device: device, zone: zone.rawValue, cursor: batch.cursor,
            items: batch.items.map {
                .init(id: $0.item.rawValue, version: StoredVersion(vector: $0.version.vector, deleted: $0.version.isDeleted, blob: $0.version.payload))
            })
        let response: PushResponse
        do {
            let receipt = try await storage.upload(upload, limits: limits, now: serverNow())
            response = PushResponse(
                batchID: batch.batchID, status: .committed,
                results: receipt.results.map { PushResponse.ItemResult(item: ItemID($0.id), outcome: $0.outcome) })
            observe(batch, response)
        } catch let error as SyncServerError {
            guard let refusal = ZoneTransport.refusal(code: error.code.rawValue, items: error.items, batchID: batch.batchID) else { throw error }
            response = refusal
        }
        try fault(.push, .answer)
        return response
    }

    package func pull(_ request: PullRequest) async throws -> PullResponse<SealedVersion> {
        try fault(.pull, .request)
        let feed = try await storage.changes(ChangeQuery(
            account: account, zone: zone.rawValue, after: request.cursor, limit: min(request.limit, pageItems), maximumBytes: pageBytes,
            fullResync: request.isFullResync, device: device, now: serverNow()))
        try fault(.pull, .answer)
        switch feed {
        case .cursorExpired:
            return .cursorExpired(requestID: request.requestID)
        case .restored:
            return .feedRestored(requestID: request.requestID)
        case .page(let page):
            let items = page.items.map { item in
                SyncCore.ChangedItem(
                    item: ItemID(item.id), sequence: item.sequence,
                    versions: item.versions.map { SealedVersion(vector: $0.vector, isDeleted: $0.deleted, payload: $0.blob) })
            }
            return .changes(
                requestID: request.requestID, items: items, nextCursor: page.cursor, hasMore: page.hasMore,
                deletionsCollectedAt: page.deletionsCollectedAt.map { Int64(($0.timeIntervalSince1970 * 1000).rounded(.down)) })
        }
    }

    package func acknowledge(_ cursor: UInt64) async throws {
        try fault(.acknowledge, .request)
        try await storage.acknowledge(device: device, of: account, zone: zone.rawValue, through: cursor, now: serverNow())
        try fault(.acknowledge, .answer)
    }

    package func modificationTimeBound() async throws -> ModificationTimeBound {
        ModificationTimeBound(localNow: ZoneTransport.milliseconds(deviceNow()), serverNow: ZoneTransport.milliseconds(serverNow()))
    }
}

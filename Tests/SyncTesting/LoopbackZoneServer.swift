import Foundation
import Synchronization
import SyncClient
import SyncCore
import SyncProtocol
import SyncServer

/// A ``ZoneServer`` that calls a server storage in the same process instead of the HTTP
/// endpoints: the same storage, batch rule and feed the routes use, without sockets, TLS or JSON.
/// The zone driver cannot tell it from ``ZoneTransport``: refusals (the route's `too_large` for a
/// blob over the size limit, the storage's quota and sibling refusals), expired cursors and a
/// restored feed come back as the same answers. A fault hook can lose a request before the
/// storage sees it, or its answer after the storage committed it; a delivery hook can deliver a
/// request twice, or late (after the device's next call), or hold an answer back and hand it to
/// the device in place of the answer to its next call of the same kind.
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
        /// Publishing this device's statement (decision 0180).
        case publishStatement
    }

    /// What the network does with one call.
    package enum Delivery: Sendable, Equatable {
        case once
        /// The request reaches the storage twice (a retry on a new connection, the first answer
        /// lost); the device gets the second answer.
        case twice
        /// The request reaches the storage only after the device's next call (a pull, which
        /// changes nothing, is answered late instead); the device sees the connection drop.
        case lateRequest
        /// The storage takes the request but its answer is held back: the device sees the
        /// connection drop, and gets the answer in place of the one to its next call of the kind,
        /// under that call's batch or request ID as ``ZoneTransport`` gives every answer (unless
        /// ``lateAnswersKeepTheirIDs``).
        case lateAnswer
    }

    /// What a malicious or broken server does (the simulation's malicious faults and broken-rule
    /// checks set it): changes a batch before the storage sees it, answers one as stored without
    /// storing it, answers a pull with another answer (a page changed, an expired cursor), or
    /// changes the statements it serves.
    package struct Tampering: Sendable {
        package var upload: @Sendable (PushBatch<SealedVersion>) -> PushBatch<SealedVersion>
        package var acknowledgeWithoutStoring: @Sendable (PushBatch<SealedVersion>) -> Bool
        package var page: @Sendable ([SyncCore.ChangedItem<SealedVersion>]) -> [SyncCore.ChangedItem<SealedVersion>]
        package var answer: @Sendable (PullRequest, PullResponse<SealedVersion>) -> PullResponse<SealedVersion>
        package var statements: @Sendable ([StatementMessage]) -> [StatementMessage]
        /// Another storage the server serves this device from instead (a fork of the account);
        /// nil: the loopback's own.
        package var fork: @Sendable () -> (any ServerStorage)?

        package init(
            upload: @escaping @Sendable (PushBatch<SealedVersion>) -> PushBatch<SealedVersion> = { $0 },
            acknowledgeWithoutStoring: @escaping @Sendable (PushBatch<SealedVersion>) -> Bool = { _ in false },
            page: @escaping @Sendable ([SyncCore.ChangedItem<SealedVersion>]) -> [SyncCore.ChangedItem<SealedVersion>] = { $0 },
            answer: @escaping @Sendable (PullRequest, PullResponse<SealedVersion>) -> PullResponse<SealedVersion> = { $1 },
            statements: @escaping @Sendable ([StatementMessage]) -> [StatementMessage] = { $0 },
            fork: @escaping @Sendable () -> (any ServerStorage)? = { nil }
        ) {
            self.upload = upload
            self.acknowledgeWithoutStoring = acknowledgeWithoutStoring
            self.page = page
            self.answer = answer
            self.statements = statements
            self.fork = fork
        }
    }

    /// What the network does to a call at a stage: throwing loses the request or the answer.
    package typealias Fault = @Sendable (Call, Stage) throws -> Void

    /// The error a fault throws: what a dropped connection looks like to the driver.
    package struct Lost: Error {
        package init() {}
    }

    /// Messages of this connection still on their way: answers held back and requests delivered late.
    private final class InFlight: Sendable {
        struct Messages {
            var pushAnswer: PushResponse?
            var pullAnswer: HeldPage?
            var requests: [@Sendable () async -> Void] = []
        }

        let messages = Mutex(Messages())
    }

    /// An answer to a pull held back, with the request it answered: a page names that request's
    /// question on the wire (`after`, `resync`, `collected`).
    private struct HeldPage: Sendable {
        var request: PullRequest
        var response: PullResponse<SealedVersion>
    }

    package let storage: any ServerStorage
    package let account: AccountID
    package let device: DeviceID
    package let zone: ZoneID
    package let limits: UploadLimits
    /// The largest blob the route takes (`ServerConfiguration.Limits.maximumBlobBytes`).
    package let maximumBlobBytes: Int
    /// The most payload bytes one upload may carry, standing for the route's request-body limit
    /// (`ServerConfiguration.Limits.maximumRequestBytes`, which counts the JSON): over it, the
    /// batch is refused `too_large` naming no item (decision 0224).
    package let maximumRequestBytes: Int
    /// Whether an answer held back reaches the device under the ID of the call it answered (a
    /// transport that does not stamp answers with the current call's ID); the machine ignores it.
    package let lateAnswersKeepTheirIDs: Bool
    /// The most items and bytes of a page the server serves.
    package let pageItems: Int
    package let pageBytes: Int
    /// The server's clock and the device's.
    package let serverNow: @Sendable () -> Date
    package let deviceNow: @Sendable () -> Date
    package let fault: Fault
    package let deliver: @Sendable (Call) -> Delivery
    package let tampering: Tampering?
    /// Sees every batch the storage committed or the server refused, with its answer (before the
    /// answer may be lost).
    package let observe: @Sendable (PushBatch<SealedVersion>, PushResponse) -> Void
    /// Sees every batch the device sends, when it sends it (the network may lose it, or deliver
    /// it late or twice), after the tampering's change of uploads.
    package let sent: @Sendable (PushBatch<SealedVersion>) -> Void
    private let inFlight = InFlight()
    /// The storage this call reaches: the loopback's, or the fork the tampering serves.
    private var served: any ServerStorage { tampering?.fork() ?? storage }

    package init(
        storage: any ServerStorage, account: AccountID, device: DeviceID, zone: ZoneID,
        limits: UploadLimits = UploadLimits(maximumItemsPerAccount: 100_000), maximumBlobBytes: Int = ServerConfiguration.Limits().maximumBlobBytes,
        maximumRequestBytes: Int = .max,
        lateAnswersKeepTheirIDs: Bool = false, pageItems: Int = 1_000, pageBytes: Int = 4 << 20,
        serverNow: @escaping @Sendable () -> Date = { Date() }, deviceNow: @escaping @Sendable () -> Date = { Date() },
        fault: @escaping Fault = { _, _ in },
        deliver: @escaping @Sendable (Call) -> Delivery = { _ in .once },
        tampering: Tampering? = nil,
        observe: @escaping @Sendable (PushBatch<SealedVersion>, PushResponse) -> Void = { _, _ in },
        sent: @escaping @Sendable (PushBatch<SealedVersion>) -> Void = { _ in }
    ) {
        self.storage = storage
        self.account = account
        self.device = device
        self.zone = zone
        self.limits = limits
        self.maximumBlobBytes = maximumBlobBytes
        self.maximumRequestBytes = maximumRequestBytes
        self.lateAnswersKeepTheirIDs = lateAnswersKeepTheirIDs
        self.pageItems = pageItems
        self.pageBytes = pageBytes
        self.serverNow = serverNow
        self.deviceNow = deviceNow
        self.fault = fault
        self.deliver = deliver
        self.tampering = tampering
        self.observe = observe
        self.sent = sent
    }

    package func push(_ batch: PushBatch<SealedVersion>) async throws -> PushResponse {
        let batch = tampering?.upload(batch) ?? batch
        sent(batch)
        let delivery = deliver(.push)
        try fault(.push, .request)
        if delivery == .lateRequest {
            deliverLater { _ = try? await self.store(batch) }
            throw Lost()
        }
        var response = try await store(batch)
        if delivery == .twice { response = try await store(batch) }
        await deliverLateRequests()
        try fault(.push, .answer)
        return try exchange(response, late: delivery == .lateAnswer, held: \.pushAnswer) { earlier in
            var earlier = earlier
            earlier.batchID = batch.batchID
            return earlier
        }
    }

    /// What the route and the storage answer to `batch`.
    private func store(_ batch: PushBatch<SealedVersion>) async throws -> PushResponse {
        // The server refuses a revoked device's token: a request that arrives after the
        // revocation (delivered late) stores nothing.
        guard try await storage.devices(of: account).first(where: { $0.id == device })?.isActive != false else { throw Lost() }
        // The route refuses a body over its limit before it reads an item, then a blob over its
        // limit, before the storage sees the batch.
        if batch.items.reduce(0, { $0 + $1.version.payload.count }) > maximumRequestBytes,
            let refusal = ZoneTransport.refusal(code: ErrorCode.tooLarge, items: [], batchID: batch.batchID)
        {
            observe(batch, refusal)
            return refusal
        }
        let oversized = batch.items.filter { $0.version.payload.count > maximumBlobBytes }.map(\.item)
        if !oversized.isEmpty, let refusal = ZoneTransport.refusal(code: ErrorCode.tooLarge, items: oversized, batchID: batch.batchID) {
            observe(batch, refusal)
            return refusal
        }
        if tampering?.acknowledgeWithoutStoring(batch) == true {
            let response = PushResponse(
                batchID: batch.batchID, status: .committed, results: batch.items.map { PushResponse.ItemResult(item: $0.item, outcome: .applied) })
            observe(batch, response)
            return response
        }
        let upload = UploadBatch(
            account: account, device: device, zone: zone, cursor: batch.cursor,
            items: batch.items.map {
                .init(key: $0.item, version: $0.version)
            })
        do {
            let receipt = try await served.upload(upload, limits: limits, now: serverNow())
            let response = PushResponse(
                batchID: batch.batchID, status: .committed,
                results: receipt.results.map { PushResponse.ItemResult(item: $0.id, outcome: $0.outcome, sequence: $0.sequence) },
                latestSequence: receipt.latestSequence)
            observe(batch, response)
            return response
        } catch let error as SyncServerError {
            guard let refusal = ZoneTransport.refusal(code: error.code.rawValue, items: error.items, batchID: batch.batchID) else { throw error }
            observe(batch, refusal)
            return refusal
        }
    }

    package func pull(_ request: PullRequest) async throws -> PullResponse<SealedVersion> {
        let delivery = deliver(.pull)
        try fault(.pull, .request)
        var response = try await page(request)
        if delivery == .twice { response = try await page(request) }
        await deliverLateRequests()
        try fault(.pull, .answer)
        let held = HeldPage(request: request, response: response)
        return try exchange(held, late: delivery == .lateAnswer || delivery == .lateRequest, held: \.pullAnswer) { earlier in
            // The transport takes a page for the request whose question it names, and an expired
            // or restored answer (an error, naming none) for the current call.
            let asked = earlier.request
            return switch earlier.response {
            case .changes(_, let items, let nextCursor, let hasMore, let collectedAt):
                HeldPage(request: request, response: .changes(
                    requestID: request.idOfPage(after: asked.cursor, resync: asked.isFullResync, collected: asked.includesCollectedDeletions),
                    items: items, nextCursor: nextCursor, hasMore: hasMore, deletionsCollectedAt: collectedAt))
            case .cursorExpired: HeldPage(request: request, response: .cursorExpired(requestID: request.requestID))
            case .feedRestored: HeldPage(request: request, response: .feedRestored(requestID: request.requestID))
            }
        }.response
    }

    private func page(_ request: PullRequest) async throws -> PullResponse<SealedVersion> {
        let feed = try await served.changes(ChangeQuery(
            account: account, zone: zone, after: request.cursor, told: request.told, limit: min(request.limit, pageItems), maximumBytes: pageBytes,
            fullResync: request.isFullResync, includesCollectedDeletions: request.includesCollectedDeletions, device: device, now: serverNow()))
        let answer: PullResponse<SealedVersion>
        switch feed {
        case .cursorExpired:
            answer = .cursorExpired(requestID: request.requestID)
        case .restored:
            answer = .feedRestored(requestID: request.requestID)
        case .page(let page):
            let items = page.items
            answer = .changes(
                requestID: request.requestID, items: tampering?.page(items) ?? items, nextCursor: page.cursor, hasMore: page.hasMore,
                deletionsCollectedAt: page.deletionsCollectedAtMilliseconds)
        }
        return tampering?.answer(request, answer) ?? answer
    }

    package func acknowledge(_ cursor: UInt64) async throws {
        let delivery = deliver(.acknowledge)
        try fault(.acknowledge, .request)
        let acknowledge = { @Sendable [device, account, zone, serverNow] in
            try await served.acknowledge(device: device, of: account, zone: zone, through: cursor, now: serverNow())
        }
        if delivery == .lateRequest {
            deliverLater { try? await acknowledge() }
            throw Lost()
        }
        try await acknowledge()
        if delivery == .twice { try await acknowledge() }
        await deliverLateRequests()
        try fault(.acknowledge, .answer)
        if delivery == .lateAnswer { throw Lost() }
    }

    /// The zone's statements. No fault or delivery hook runs: the driver reads them concurrently
    /// with its pushes (decision 0190), and a hook drawing from a shared random source would make
    /// the order of draws, and so a seeded run, depend on scheduling. A malicious server changes
    /// them through ``Tampering/statements``.
    package func statements() async throws -> StatementListResponse {
        let stored = try await served.statements(zone: zone, of: account)
        let statements = stored.map { StatementMessage(device: $0.device, statement: Base64Bytes($0.statement)) }
        return StatementListResponse(statements: tampering?.statements(statements) ?? statements)
    }

    package func publishStatement(_ statement: [UInt8]) async throws {
        try fault(.publishStatement, .request)
        try await served.publishStatement(statement, zone: zone, device: device, of: account, now: serverNow())
        try fault(.publishStatement, .answer)
    }

    package func modificationTimeBound() async throws -> ModificationTimeBound {
        ModificationTimeBound(localNow: ZoneTransport.milliseconds(deviceNow()), serverNow: ZoneTransport.milliseconds(serverNow()))
    }

    /// Holds `response` back when `late` (the device sees the connection drop); otherwise answers
    /// with the answer held back before, if any, in its place, under this call's ID (`stamp`).
    private func exchange<Answer: Sendable>(
        _ response: Answer, late: Bool, held: WritableKeyPath<InFlight.Messages, Answer?>, stamp: (Answer) -> Answer
    ) throws -> Answer {
        let earlier = inFlight.messages.withLock { messages in
            defer { messages[keyPath: held] = late ? response : nil }
            return late ? nil : messages[keyPath: held]
        }
        if late { throw Lost() }
        guard let earlier else { return response }
        return lateAnswersKeepTheirIDs ? earlier : stamp(earlier)
    }

    private func deliverLater(_ request: @escaping @Sendable () async -> Void) {
        inFlight.messages.withLock { $0.requests.append(request) }
    }

    /// Delivers the requests held back, after the device's later call reached the storage.
    private func deliverLateRequests() async {
        let requests = inFlight.messages.withLock { messages in
            defer { messages.requests = [] }
            return messages.requests
        }
        for request in requests { await request() }
    }
}

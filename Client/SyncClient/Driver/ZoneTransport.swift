import Foundation
import NIOHTTP1
import SyncCore
import SyncProtocol

/// The zone endpoints of the server in SyncCore's terms: a sealed push batch becomes an upload, a
/// pull request a page of the change feed. A zone of the account, or of a shared group
/// (`/v1/groups/{group}/zones/…`, decision 0290).
package struct ZoneTransport: Sendable {
    package let connection: ServerConnection
    package let zone: ZoneID
    /// The shared group whose zone this is (its ID in hexadecimal); nil for the account's own.
    package let group: String?

    package init(connection: ServerConnection, zone: ZoneID, group: String? = nil) {
        self.connection = connection
        self.zone = zone
        self.group = group
    }

    private var base: String { (group.map { "/v1/groups/\($0)" } ?? "/v1") + "/zones/\(zone.rawValue)" }

    /// Uploads a batch at the batch's feed position. A retried batch is merged again, and versions
    /// the server already holds come back `stale`, which is idempotent. A position below the zone's
    /// horizon is refused (`cursorExpired`: resync); a batch refused because of some items (too
    /// large, quota, siblings) answers `refused` naming them.
    package func push(_ batch: PushBatch<SealedVersion>) async throws -> PushResponse {
        let upload = UploadRequest(cursor: batch.cursor, items: batch.items.map {
            UploadItem(id: $0.item, vector: $0.version.vector, deleted: $0.version.isDeleted, blob: Base64Bytes($0.version.payload))
        })
        do {
            let answer = try await connection.send(.POST, base + "/items", body: upload, as: UploadResponse.self)
            let results = answer.results.map { PushResponse.ItemResult(item: $0.id, outcome: $0.outcome, sequence: $0.sequence) }
            return PushResponse(batchID: batch.batchID, status: .committed, results: results, latestSequence: answer.latestSequence)
        } catch {
            guard let failure = ServerFailure.failure(of: error),
                let response = Self.refusal(code: failure.code, items: failure.items, batchID: batch.batchID)
            else { throw error }
            return response
        }
    }

    /// The machine's answer to an upload the server refused with error `code`, naming `items`;
    /// nil for an error that is not a refusal (decision 0101). The in-process loopback over a
    /// storage answers the same way.
    package static func refusal(code: String, items: [ItemID], batchID: UInt64) -> PushResponse? {
        if let reason = itemRefusals[code], !items.isEmpty {
            let refused = PushResponse.Refused(reason: reason, items: items)
            return PushResponse(batchID: batchID, status: .refused, results: [], refused: refused)
        }
        switch code {
        case ErrorCode.tooManySiblings: return PushResponse(batchID: batchID, status: .refused, results: [])
        case ErrorCode.cursorExpired: return PushResponse(batchID: batchID, status: .cursorExpired, results: [])
        case ErrorCode.tooLarge: return PushResponse(batchID: batchID, status: .tooLarge, results: [])
        default: return nil
        }
    }

    /// The error codes of an upload refused because of the items it names (decision 0101).
    private static let itemRefusals: [String: ItemRefusal] = [
        ErrorCode.tooLarge: .tooLarge, ErrorCode.quotaExceeded: .quotaExceeded, ErrorCode.tooManySiblings: .tooManySiblings,
    ]

    /// Fetches one page of the change feed.
    package func pull(_ request: PullRequest) async throws -> PullResponse<SealedVersion> {
        var path = base + "/changes?after=\(request.cursor)&limit=\(request.limit)"
        if request.isFullResync { path += "&resync=true" }
        if request.includesCollectedDeletions { path += "&collected=true" }
        if request.told > 0 { path += "&told=\(request.told)" }
        do {
            let page = try await connection.send(.GET, path, body: nil, as: ChangesResponse.self)
            let items = page.items.map { changed in
                SyncCore.ChangedItem(
                    item: changed.id, sequence: changed.sequence,
                    versions: changed.versions.map { SealedVersion(vector: $0.vector, isDeleted: $0.deleted, payload: $0.blob.bytes) })
            }
            return .changes(
                requestID: request.idOfPage(after: page.after, resync: page.resync, collected: page.collected), items: items, nextCursor: page.cursor, hasMore: page.hasMore,
                deletionsCollectedAt: page.deletionsCollectedAt)
        } catch where ServerFailure.code(of: error) == ErrorCode.cursorExpired {
            return .cursorExpired(requestID: request.requestID)
        } catch where ServerFailure.code(of: error) == ErrorCode.feedRestored {
            return .feedRestored(requestID: request.requestID)
        }
    }

    /// This device's and the server's clocks read now, asking the server (`/health`) only when
    /// no answer of it was read yet (decision 0108).
    package func modificationTimeBound(localNow: Date) async throws -> ModificationTimeBound {
        if connection.serverClock.now() == nil { try await connection.send(.GET, "/health", body: nil) }
        guard let server = connection.serverClock.now() else {
            throw SyncClientError(.unreachable, "the server's answers carry no time (Date header); cannot bound modification times")
        }
        return ModificationTimeBound(localNow: Self.milliseconds(localNow), serverNow: Self.milliseconds(server))
    }

    /// `date` in milliseconds since 1970, clamped to what an `Int64` holds (an item's dates are
    /// range-checked where they enter; this conversion never traps on one that was not).
    package static func milliseconds(_ date: Date) -> Int64 {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        guard milliseconds.isFinite else { return 0 }
        return Int64(exactly: milliseconds) ?? (milliseconds < 0 ? .min : .max)
    }

    /// Tells the server this device applied everything up to `cursor` (tombstone collection).
    package func acknowledge(_ cursor: UInt64) async throws {
        try await connection.send(.POST, base + "/acknowledge", body: AcknowledgeRequest(cursor: cursor))
    }

    package func statements() async throws -> StatementListResponse {
        try await connection.send(.GET, base + "/statements", body: nil, as: StatementListResponse.self)
    }

    package func publishStatement(_ statement: [UInt8]) async throws {
        try await connection.send(.PUT, base + "/statement", body: StatementRequest(statement: Base64Bytes(statement)))
    }
}

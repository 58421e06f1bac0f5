import Foundation
import SyncCore
import SyncProtocol

/// The server's side of one zone as ``ZoneDriver`` talks to it: the HTTP endpoints
/// (``ZoneTransport``), or, in the simulation and in-process tests, a loopback over a server
/// storage.
package protocol ZoneServer: Sendable {
    /// The zone.
    var zone: ZoneID { get }

    /// Uploads a sealed batch; a refusal the machine understands (per-item, expired cursor) is an
    /// answer, not an error.
    func push(_ batch: PushBatch<SealedVersion>) async throws -> PushResponse

    /// Fetches one page of the change feed; an expired cursor or a restored feed is an answer.
    func pull(_ request: PullRequest) async throws -> PullResponse<SealedVersion>

    /// Tells the server this device applied everything up to `cursor` (tombstone collection).
    func acknowledge(_ cursor: UInt64) async throws

    /// This device's clock and the server's, read now (decision 0108).
    func modificationTimeBound() async throws -> ModificationTimeBound

    /// The latest signed statement of every device about the zone, as the server keeps them
    /// (decision 0180); unchecked.
    func statements() async throws -> StatementListResponse

    /// Replaces this device's statement about the zone with `statement` (signed wire bytes).
    func publishStatement(_ statement: [UInt8]) async throws
}

extension ZoneTransport: ZoneServer {
    package func modificationTimeBound() async throws -> ModificationTimeBound {
        try await modificationTimeBound(localNow: Date())
    }
}

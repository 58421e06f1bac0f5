import KeychainCrypto
import SyncCore

/// What a revocation answers for (decision 0281): the blobs the server serves now that the
/// verified log admits and would refuse once the device is revoked — what that device sealed
/// before, unsigned blobs of an epoch it held, and blobs only its own `vouch` entries answered
/// for. The revoking device names them in `vouch` entries before its revocation, so that a device
/// pulling them afterwards (one enrolled later, one that had not pulled them yet) takes them as
/// the devices that took them earlier did, while anything the revoked device seals later is
/// refused.
package enum RevokedWrites {
    /// One zone to read: its server side and the sealer that opens its blobs.
    package struct Zone: Sendable {
        package var server: any ZoneServer
        package var sealer: VersionSealer

        package init(server: any ZoneServer, sealer: VersionSealer) {
            self.server = server
            self.sealer = sealer
        }
    }

    /// The digests (``DeviceLog/vouchDigest(of:)``) of every blob in `zones` that `log` admits
    /// and `revoked` (the same log with the revocation appended) refuses, read page by page as a
    /// full resync reads them, as `device`, collected deletions included (a device back past the
    /// horizon removes its copy on one, R10a). A blob that does not open is skipped: no device takes
    /// it either way.
    package static func digests(in zones: [Zone], log: any WriterAdmission, revoked: any WriterAdmission, device: DeviceID) async throws -> [[UInt8]] {
        var digests: [[UInt8]] = []
        var seen = Set<[UInt8]>()
        for zone in zones {
            var position: UInt64 = 0
            var number: UInt64 = 0
            var stalled = 0
            while true {
                number += 1
                let request = PullRequest(
                    requestID: RequestID(epoch: 0, number: number), device: device, zone: zone.server.zone, cursor: position,
                    isFullResync: true, limit: pageSize, includesCollectedDeletions: true)
                guard case .changes(_, let items, let next, let hasMore, _) = try await zone.server.pull(request) else {
                    throw SyncClientError(.serverError, "the server did not serve zone \(zone.server.zone) in full")
                }
                for changed in items {
                    for version in changed.versions {
                        let blob = version.payload
                        guard let (envelope, context) = try? zone.sealer.envelope(
                            of: blob, item: changed.item, vector: version.vector, deleted: version.isDeleted),
                            log.refusal(of: envelope, context: context, blob: blob) == nil,
                            revoked.refusal(of: envelope, context: context, blob: blob) != nil
                        else { continue }
                        let digest = DeviceLog.vouchDigest(of: blob)
                        if seen.insert(digest).inserted { digests.append(digest) }
                    }
                }
                guard hasMore else { break }
                // A page that does not move on answers an earlier request: ask again.
                guard next > position else {
                    stalled += 1
                    if stalled > maximumStalls { throw SyncClientError(.serverError, "the server's pages of zone \(zone.server.zone) did not move on") }
                    continue
                }
                stalled = 0
                position = next
            }
        }
        return digests
    }

    private static let pageSize = 500
    private static let maximumStalls = 10
}

import KeychainCrypto
import SyncCore

/// Writes of a revoked device (decision 0275): from the moment this device verified a revocation,
/// nothing the revoked device signed is taken, so what it wrote before and this device holds is
/// written again as this device's own, with the same content and time, and pushed.
extension ZoneDriver {
    /// Takes as a local change every live version the state holds, in step with the server, that
    /// a device the verified log shows revoked wrote. Each was taken before this device verified
    /// the revocation (after it, ``VersionSealer/open`` refuses them); written again, signed by a
    /// current member, it reaches the devices that pull it after the revocation. Its time stays
    /// the original's, so a concurrent later write still wins the conflict.
    func adoptRevokedWrites() throws {
        guard let log = try witness?.recordedLog(), log.lastRevokedEpoch != nil else { return }
        let revoked = Set(log.members.filter(\.value.isRevokedByAnother).keys)
        for (item, record) in machine.state.records
        where !record.isPending && !record.version.isDeleted && revoked.contains(record.version.device) && !sealer.isSealedAway(record.version) {
            _ = machine.localChange(LocalChange(
                item: item, scope: .synchronizable, content: record.version.content, modifiedAt: record.version.modifiedAt,
                basedOn: record.seen))
            touched?.insert(item)
        }
    }
}

import KeychainCrypto
import KeychainModel
import SyncClient
import SyncCore
import SyncTesting

extension ShippedSimulation {
    /// The loopback's tampering for the run's broken variant (nil: none).
    func tampering(for device: Int) -> LoopbackZoneServer.Tampering? {
        let faults = faults, sealer = sealer, lastLive = lastLive, dropped = droppedVectors
        switch configuration.breakRule {
        case .loseAcknowledged:
            // A device gives back a value the server lost when the server's listing shows the loss
            // (decisions 0248, 0253): this server hides it, serving a stored value again above the
            // dropped version's vector, so the device takes it as a later write.
            return .init(acknowledgeWithoutStoring: { batch in
                guard faults.withLock({ $0.chance(percent: 25) }) else { return false }
                dropped.withLock { dropped in
                    for pushed in batch.items { dropped[pushed.item, default: VersionVector()].join(pushed.version.vector) }
                }
                return true
            }, page: { items in
                items.map { changed in
                    guard let vector = dropped.withLock({ $0[changed.item] }),
                        !changed.versions.contains(where: { $0.vector.descends(from: vector) }),
                        let live = changed.versions.first(where: { !$0.isDeleted }),
                        let forged = Self.forge(live, above: changed, alsoAbove: vector, sealer: sealer, data: nil)
                    else { return changed }
                    return forged
                }
            })
        case .corruptUpload:
            return .init(upload: { batch in
                var batch = batch
                for index in batch.items.indices where faults.withLock({ $0.chance(percent: 20) }) {
                    batch.items[index].version.payload[batch.items[index].version.payload.count / 2] ^= 0x5A
                }
                return batch
            })
        case .skipApply:
            // The same items to the same device every time: a device gives back what a server
            // leaves out that it had (decision 0248), but cannot learn what it is never served.
            return .init(page: { items in items.filter { ($0.item.rawValue.utf8.reduce(device) { $0 &+ Int($1) }) % 4 != 0 } })
        case .undoDeletion:
            return .init(upload: { batch in
                for pushed in batch.items where !pushed.version.isDeleted { lastLive.withLock { $0[pushed.item] = pushed.version } }
                return batch
            }, page: { items in
                items.map { changed in
                    if let live = changed.versions.first(where: { !$0.isDeleted }) {
                        lastLive.withLock { $0[changed.item] = live }
                        return changed
                    }
                    guard let earlier = lastLive.withLock({ $0[changed.item] }),
                        let forged = Self.forge(earlier, above: changed, sealer: sealer, data: nil)
                    else { return changed }
                    return forged
                }
            })
        case .inventValue:
            return .init(page: { items in
                items.map { changed in
                    guard let live = changed.versions.first(where: { !$0.isDeleted }), faults.withLock({ $0.chance(percent: 20) }),
                        let forged = Self.forge(live, above: changed, sealer: sealer, data: Array("forged".utf8))
                    else { return changed }
                    return forged
                }
            })
        case .sealUnderTheFirstEpoch:
            guard let first = keys.accountKey(epoch: VersionSealer.firstEpoch) else { return nil }
            let firstEpochSealer = VersionSealer(keys: AccountKeys(accountKey: first), account: Self.accountName, zone: sealer.zone)
            var sealing = noteShownEpochs(for: device)
            sealing.upload = { batch in
                var batch = batch
                for index in batch.items.indices {
                    let pushed = batch.items[index]
                    guard let version = try? sealer.open(pushed.version.payload, item: pushed.item, vector: pushed.version.vector, deleted: pushed.version.isDeleted),
                        let payload = try? firstEpochSealer.seal(version, item: pushed.item)
                    else { continue }
                    batch.items[index].version.payload = payload
                }
                return batch
            }
            return sealing
        default:
            return nil
        }
    }

    /// `earlier`'s item (with `data` in place of its secret when given), sealed as a new version
    /// above every version of `changed` and `alsoAbove`, written by a device that does not exist.
    static func forge(
        _ earlier: SealedVersion, above changed: SyncCore.ChangedItem<SealedVersion>, alsoAbove: VersionVector = VersionVector(),
        sealer: VersionSealer, data: [UInt8]?
    ) -> SyncCore.ChangedItem<SealedVersion>? {
        guard var version = try? sealer.open(earlier.payload, item: changed.item, vector: earlier.vector, deleted: earlier.isDeleted)
        else { return nil }
        if let data {
            guard var item = ItemContent.decode(version.content) else { return nil }
            item.data = data
            version.content = ItemContent.encode(item)
        }
        let seen = changed.versions.reduce(alsoAbove) { $0.joined(with: $1.vector) }
        version.vector = seen.incremented(for: DeviceID("forger")!)
        version.isDeleted = false
        version.origin = version.vector
        version.overwritten = seen
        guard let payload = try? sealer.seal(version, item: changed.item) else { return nil }
        var forged = changed
        forged.versions = [SealedVersion(vector: version.vector, isDeleted: false, payload: payload)]
        return forged
    }
}

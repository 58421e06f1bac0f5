import SyncCore

/// What actually happened in a run, recorded outside the system under test so the checker can
/// judge the final state: every user write, what the server durably accepted, what the devices
/// reported.
struct SimulationLedger {
    struct Write {
        var device: Int
        var zone: ZoneID
        var item: ItemID
        /// The vector the device gave the write; `nil` for items that never leave the device.
        var vector: VersionVector?
        var isDeletion: Bool
        /// The content of the device's local copy the write replaced.
        var replaced: [UInt8]?
    }

    struct ItemKey: Hashable {
        var zone: ZoneID
        var item: ItemID
    }

    /// Synchronizable updates, by their (unique) content.
    var updates: [[UInt8]: Write] = [:]
    /// Synchronizable deletions.
    var deletions: [Write] = []
    /// Contents of items that must never leave their device, and that device.
    var localOnly: [[UInt8]: Int] = [:]
    /// Update contents the server durably accepted (stored, or acknowledged as already stored).
    var acknowledgedUpdates: Set<[UInt8]> = []
    /// Deletion vectors the server durably accepted, per item.
    var acknowledgedDeletions: [ItemKey: [VersionVector]] = [:]
    /// Vectors of the tombstones the server purged, per item.
    var purged: [ItemKey: [VersionVector]] = [:]
    /// Every content the server ever received.
    var receivedByServer: Set<[UInt8]> = []
    /// Problems seen while running (rejections, unreadable payloads).
    var incidents: [String] = []
    var nextContent: UInt64 = 0
    /// What happened how often, for the report: writes, resyncs, purges, crashes, conflicts.
    var statistics = SimulationStatistics()

    mutating func freshContent(localOnly: Bool) -> [UInt8] {
        nextContent += 1
        var bytes: [UInt8] = [localOnly ? 0x4C : 0x53]
        withUnsafeBytes(of: nextContent.bigEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// Records the server's answer to a batch it processed.
    mutating func recordPush(_ batch: PushBatch<SealedVersion>, response: PushResponse) {
        if response.status == .committed { statistics.committedBatches += 1 }
        let conflicts = response.results.filter { $0.outcome == .conflictKept }.count
        statistics.conflictsKept += conflicts
        if batch.zone.isKeyValueStore { statistics.keyValueConflicts += conflicts }
        for (pushed, result) in zip(batch.items, response.results) {
            guard let version = PayloadCodec.open(pushed.version) else {
                incidents.append("server received an unreadable payload for \(pushed.item)")
                continue
            }
            receivedByServer.insert(version.content)
            guard response.status == .committed, result.outcome != .tooManySiblings else { continue }
            if version.isDeleted {
                if version.origin == version.vector {
                    acknowledgedDeletions[ItemKey(zone: batch.zone, item: pushed.item), default: []].append(version.vector)
                }
            } else {
                acknowledgedUpdates.insert(version.content)
            }
        }
    }
}

extension ZoneID {
    /// Whether this is a key-value store's zone (`kv.NAME`, decision 0062).
    var isKeyValueStore: Bool { rawValue.hasPrefix("kv.") }
}

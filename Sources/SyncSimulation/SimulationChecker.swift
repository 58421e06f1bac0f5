import SyncCore

/// Judges a healed run: convergence, no lost acknowledged write, no undone deletion, no invented
/// value, local-only items kept local, and no incident (rejection, unreadable payload) on the way.
struct SimulationChecker {
    let simulation: Simulation

    func violations() -> [String] {
        var found = simulation.ledger.incidents
        var live: [SimulationLedger.ItemKey: [UInt8]] = [:]
        for zone in simulation.configuration.zones {
            let serverItems = serverLiveItems(zone)
            for (item, content) in serverItems { live[.init(zone: zone, item: item)] = content }
            for device in simulation.devices {
                let kept = keptWithoutEvidence(device, zone, serverItems)
                let differing = Set(kept.keys).union(serverItems.keys).filter { kept[$0] != serverItems[$0] }
                guard !differing.isEmpty else { continue }
                found.append("\(device.id) disagrees with the server on zone \(zone): \(differing.map(\.rawValue).sorted().joined(separator: ","))")
            }
        }
        found += inventedValues()
        found += lostWrites(live: live)
        found += droppedVersions()
        found += undoneDeletions(live: live)
        return found.sorted()
    }

    /// The device's items, less those it kept and reported because a resync no longer listed them
    /// and the server has no live value of (absence is not deletion: without authenticated
    /// evidence of their deletion they stay, as problems; decision 0106).
    private func keptWithoutEvidence(_ device: SimulatedDevice, _ zone: ZoneID, _ serverItems: [ItemID: [UInt8]]) -> [ItemID: [UInt8]] {
        var items = device.keychain[zone] ?? [:]
        for item in device.reportedUnlisted[zone] ?? [] where serverItems[item] == nil { items[item] = nil }
        return items
    }

    /// The server's items as a device resolves them: the winning value of each live item.
    private func serverLiveItems(_ zone: ZoneID) -> [ItemID: [UInt8]] {
        var items: [ItemID: [UInt8]] = [:]
        for (item, stored) in simulation.server.zones[zone]?.items ?? [:] {
            let opened = stored.versions.compactMap(PayloadCodec.open)
            if let winner = ConflictResolution.resolve(opened), !winner.isDeleted { items[item] = winner.content }
        }
        return items
    }

    private func inventedValues() -> [String] {
        let ledger = simulation.ledger
        var found: [String] = []
        for content in ledger.receivedByServer where !content.isEmpty && ledger.updates[content] == nil {
            found.append(ledger.localOnly[content] != nil ? "a local-only item reached the server" : "the server received a value never written")
        }
        for device in simulation.devices {
            let contents = device.keychain.values.flatMap(\.values)
                + device.history.values.flatMap { $0.values.flatMap { $0 } }
            for content in contents where ledger.updates[content] == nil {
                found.append(ledger.localOnly[content] != nil
                    ? "\(device.id) holds another device's local-only item" : "\(device.id) holds a value never written")
            }
        }
        return found
    }

    /// Every update the server acknowledged is the final value, in some device's history, or was
    /// replaced by a user who saw it (a later update or deletion on a device that showed it).
    private func lostWrites(live: [SimulationLedger.ItemKey: [UInt8]]) -> [String] {
        let ledger = simulation.ledger
        var accounted = Set(live.values)
        for device in simulation.devices {
            for items in device.history.values { accounted.formUnion(items.values.flatMap { $0 }) }
        }
        accounted.formUnion(ledger.updates.values.compactMap(\.replaced))
        accounted.formUnion(ledger.deletions.compactMap(\.replaced))
        return ledger.acknowledgedUpdates.subtracting(accounted).map { content in
            let write = ledger.updates[content]
            return "an acknowledged write of \(write?.zone.rawValue ?? "?")/\(write?.item.rawValue ?? "?") was lost"
        }
    }

    /// The server never drops a version nothing dominates: every acknowledged update is covered by
    /// a version the server still holds or a tombstone it purged.
    private func droppedVersions() -> [String] {
        let ledger = simulation.ledger
        var found: [String] = []
        for content in ledger.acknowledgedUpdates {
            guard let write = ledger.updates[content], let vector = write.vector else { continue }
            let key = SimulationLedger.ItemKey(zone: write.zone, item: write.item)
            let stored = simulation.server.zones[write.zone]?.items[write.item]?.versions.map(\.vector) ?? []
            if !(stored + (ledger.purged[key] ?? [])).contains(where: { $0.descends(from: vector) }) {
                found.append("the server dropped an acknowledged version of \(write.zone)/\(write.item)")
            }
        }
        return found
    }

    /// An item may only be live through a write concurrent with or later than every acknowledged
    /// deletion of it: a value the deleting device had already seen never comes back.
    private func undoneDeletions(live: [SimulationLedger.ItemKey: [UInt8]]) -> [String] {
        var found: [String] = []
        for (key, content) in live {
            guard let written = simulation.ledger.updates[content]?.vector else { continue }
            let deletions = simulation.ledger.acknowledgedDeletions[key] ?? []
            if deletions.contains(where: { $0.compare(to: written) == .dominates }) {
                found.append("a deletion of \(key.zone)/\(key.item) was undone")
            }
        }
        // What the user saw, not what the vectors say: the value a user deleted never comes back
        // (also when a crash made the deletion's vector wrong).
        for deletion in simulation.ledger.deletions {
            let key = SimulationLedger.ItemKey(zone: deletion.zone, item: deletion.item)
            guard let seen = deletion.replaced, live[key] == seen else { continue }
            found.append("a value of \(key.zone)/\(key.item) a user deleted came back")
        }
        return found
    }
}

import SyncClient
import SyncCore

/// Judges a healed run of the shipped code: the devices agree (less what each kept and reported
/// because a resync no longer listed it), no acknowledged write is lost, no value a user deleted
/// is live, no value was invented, nothing local-only reached the server, and nothing came back
/// to a device it had left (checked online, in ``ShippedLedger/check(device:shows:)``).
struct ShippedChecker {
    let simulation: ShippedSimulation

    func violations() throws -> [String] {
        let ledger = simulation.ledger
        let observed = simulation.observed.withLock { $0 }
        var found = ledger.incidents
        if observed.unreadable > 0 { found.append("the server received \(observed.unreadable) version(s) that do not open") }
        var live: [String: [UInt8]]?
        var history: Set<[UInt8]> = []
        for device in simulation.devices {
            let kept = try keptWithoutEvidence(device)
            var values = try device.values(synchronizable: true)
            for name in kept { values[name] = nil }
            history.formUnion(try device.historyValues(accounts: (0..<simulation.configuration.items).map { "item-\($0)" }))
            if let live, live != values {
                let differing = Set(live.keys).union(values.keys).filter { live[$0] != values[$0] }.sorted()
                found.append("device \(device.index) disagrees on \(differing.joined(separator: ", "))")
            }
            if live == nil { live = values }
            for value in values.values where ledger.updates[value] == nil {
                found.append(ledger.localOnly.contains(value)
                    ? "device \(device.index) holds another device's local-only item" : "device \(device.index) holds a value never written")
            }
        }
        let liveValues = Set((live ?? [:]).values)
        if !observed.received.isDisjoint(with: ledger.localOnly) { found.append("a local-only item reached the server") }
        // Every acknowledged write is live, in a history, or was replaced by a user who saw it.
        var accounted = liveValues.union(history)
        accounted.formUnion(ledger.updates.values.compactMap(\.replaced))
        accounted.formUnion(ledger.deletions.compactMap(\.replaced))
        for value in observed.acknowledged.subtracting(accounted) {
            found.append("an acknowledged write of \(ledger.updates[value]?.name ?? "?") was lost")
        }
        // A value a user deleted is not live, and a value that left a device never came back to
        // it, unless the deletion was lost with the device's sync state (counted instead).
        let dropped = droppedDeletions(observed)
        for deletion in ledger.deletions where !dropped.contains(deletion.replaced ?? []) {
            if let seen = deletion.replaced, live?[deletion.name] == seen {
                found.append("a value of \(deletion.name) a user deleted came back")
            }
        }
        for (device, value) in ledger.cameBack where !dropped.contains(value) {
            found.append("device \(device): value \(String(decoding: value, as: UTF8.self)) came back after it had left")
        }
        return found.sorted()
    }

    /// How many items the devices kept and reported because a full resync no longer listed them.
    func unlistedKept() throws -> Int {
        try simulation.devices.reduce(0) { $0 + (try keptWithoutEvidence($1)).count }
    }

    /// The values whose deletion the deleting device lost with its sync state: it had no state of
    /// the item when it deleted, or it enrolled again before the server took the deletion.
    func droppedDeletions(_ observed: ShippedLedger.Observed) -> Set<[UInt8]> {
        var dropped: Set<[UInt8]> = []
        for deletion in simulation.ledger.deletions {
            guard let value = deletion.replaced, let deviceID = deletion.deviceID, let item = deletion.item else { continue }
            let enrolledAgain = simulation.devices[deletion.device].device != deviceID
            let taken = observed.acknowledgedDeletions.contains("\(deviceID)/\(item)")
            if !deletion.stateHadItem || (enrolledAgain && !taken) { dropped.insert(value) }
        }
        return dropped
    }

    /// The names of the items `device` kept and reported because a full resync no longer listed
    /// them (absence is not deletion, decision 0106).
    private func keptWithoutEvidence(_ device: ShippedDevice) throws -> [String] {
        guard ClientStateDatabase.exists(forKeychain: device.keychainPath) else { return [] }
        let database = try ClientStateDatabase(keychainPath: device.keychainPath, create: false)
        let unlisted = Set(try database.problems(zone: .keychain).filter { $0.reason == SyncRoundReport.unlistedProblem }.map(\.item))
        guard !unlisted.isEmpty else { return [] }
        return try device.keychain.synchronizableItems().compactMap { key, attributes in
            unlisted.contains(simulation.sealer.itemID(of: key).rawValue) ? ShippedDevice.name(attributes) : nil
        }
    }
}

import KeychainModel
import KeyValueStore
import SyncClient
import SyncCore

/// Judges a healed run of the shipped code: the devices agree (less what each set aside because
/// the server refused it, or, under a malicious server, kept and reported because a resync no
/// longer listed it), no
/// acknowledged write is lost, no value a user deleted is live, no value was invented, nothing
/// local-only reached the server, every version the server received opens, and nothing came back
/// to a device it had left (checked online, in ``ShippedLedger/check(device:shows:)``).
struct ShippedChecker {
    let simulation: ShippedSimulation

    func violations() throws -> [ShippedViolation] {
        let ledger = simulation.ledger
        let observed = simulation.observed.withLock { $0 }
        var found = ledger.incidents.map { ShippedViolation(property: .settles, message: $0) }
        func violation(_ property: ShippedProperty, _ message: String) { found.append(.init(property: property, message: message)) }
        if observed.unreadable > 0 { violation(.versionsOpen, "the server received \(observed.unreadable) version(s) that do not open") }
        for sealed in observed.sealedUnderAnOlderEpoch.prefix(3) { violation(.newestShownEpoch, sealed) }
        // Per device, its values less what it kept and reported (exempt below): each is checked
        // for a value a user deleted, not the first device's only.
        var live: [[String: [UInt8]]] = []
        var history: Set<[UInt8]> = []
        // Per device, its values less what it set aside or kept and reported (those items are
        // not held to agreement on that device): the rest must agree.
        var compared: [[String: [UInt8]]] = []
        var asides: [Set<String>] = []
        // Per device, the items it set aside because the server refused them (or would).
        var refused: [Set<String>] = []
        // Every value some device still shows, kept and reported ones included.
        var held: Set<[UInt8]> = []
        for device in simulation.devices {
            var values = try device.values(synchronizable: true)
            held.formUnion(values.values)
            // An honest server lists every deletion a device needs, collected ones too (rule R10a):
            // every item is held to agreement. A malicious one may withhold them, and one whose
            // bound made it forget some has none to list; a device then keeps and reports the item
            // (R49 C7), and only what it reported is exempt.
            let forgets = simulation.configuration.collectedDeletionBound < FeedRule.maximumCollectedDeletions
            let kept = simulation.configuration.malice == nil && !forgets ? [] : Set(try keptWithoutEvidence(device))
            for name in kept { values[name] = nil }
            history.formUnion(try device.historyValues(accounts: (0..<simulation.configuration.items).map { "item-\($0)" }))
            live.append(values)
            for value in values.values where ledger.updates[value] == nil {
                if let writer = ledger.localOnly[value] {
                    if writer != device.index { violation(.localOnlyStaysLocal, "device \(device.index) holds another device's local-only item") }
                } else {
                    violation(.noInventedValue, "device \(device.index) holds a value never written")
                }
            }
            refused.append(Set(try setAside(device)))
            let aside = refused[device.index].union(kept)
            for name in aside { values[name] = nil }
            compared.append(values)
            asides.append(aside)
        }
        // Every item agrees across the devices that did not set it aside.
        for name in Set(compared.flatMap(\.keys)).union(asides.joined()).sorted() {
            let holders = compared.indices.filter { !asides[$0].contains(name) }
            let shown = holders.map { compared[$0][name] }
            if Set(shown).count > 1 {
                violation(.agreement, "devices \(holders.map(String.init).joined(separator: ", ")) disagree on \(name)")
            }
        }
        try checkKeyValues(violation)
        if !observed.received.isDisjoint(with: ledger.localOnly.keys) { violation(.localOnlyStaysLocal, "a local-only item reached the server") }
        // Every acknowledged write is live, still shown by a device (one that kept it when a
        // resync no longer listed it, decision 0106), in a history, or was replaced by a user who
        // saw it. A write the server refused was never acknowledged: it is set aside, not lost.
        var accounted = history.union(held)
        accounted.formUnion(ledger.updates.values.compactMap(\.replaced))
        accounted.formUnion(ledger.deletions.compactMap(\.replaced))
        for value in observed.acknowledged.subtracting(accounted) {
            violation(.acknowledgedWrites, "an acknowledged write of \(ledger.updates[value]?.name ?? "?") (\(ShippedLedger.label(value))) was lost")
        }
        // A value a user deleted is not live, and a value that left a device never came back to
        // it, unless the deletion was lost with the device's sync state (counted instead), or the
        // same device wrote the item again before the server took the deletion and that write is
        // set aside, refused: to sync, delete-then-write is the write, an edit other devices do
        // not get while it is refused, as any refused edit (decision 0195).
        let dropped = droppedDeletions(observed)
        for deletion in ledger.deletions where !dropped.contains(deletion.replaced ?? []) {
            if let deviceID = deletion.deviceID, let item = deletion.item, refused[deletion.device].contains(deletion.name),
                simulation.devices[deletion.device].device == deviceID,
                !observed.tookDeletion(of: "\(item)", by: "\(deviceID)", over: deletion.replaced)
            {
                continue
            }
            if let seen = deletion.replaced, let device = live.firstIndex(where: { $0[deletion.name] == seen }) {
                violation(.nothingComesBack, "a value of \(deletion.name) a user deleted came back on device \(device)")
            }
        }
        for (device, value) in ledger.cameBack where !dropped.contains(value) {
            violation(.nothingComesBack, "device \(device): value \(ShippedLedger.label(value)) came back after it had left")
        }
        return found.sorted { ($0.property.rawValue, $0.message) < ($1.property.rawValue, $1.message) }
    }

    /// The key-value stores agree (less the keys each set aside) and hold no value nobody wrote;
    /// every acknowledged write is live, or was replaced or removed by a user who saw it, or a
    /// version the server took beats it: one that descends
    /// from it or overwrote it, or a concurrent one it loses to (a key-value store keeps no
    /// history: a write that lost a conflict is gone by design). A value that came back is checked
    /// online, with the keychain's values.
    private func checkKeyValues(_ violation: (ShippedProperty, String) -> Void) throws {
        let observed = simulation.observed.withLock { $0 }
        var live: Set<[UInt8]> = []
        for device in simulation.devices { live.formUnion(try device.keyValueValues().values) }
        for taken in observed.keyValueVersions.values {
            for version in taken where !version.isDeleted {
                guard let value = try? KeyVersion.decodeSyncContent(version.content).value.stringValue.map({ Array($0.utf8) }),
                    !live.contains(value), !simulation.ledger.keyValuesReplaced.contains(value)
                else { continue }
                let beaten = taken.contains { other in
                    guard !other.sameValue(as: version) else { return false }
                    if other.overwritten.descends(from: version.origin) { return true }
                    switch other.vector.compare(to: version.vector) {
                    case .dominates: return true
                    case .concurrent: return ConflictResolution.losesTo(version, other)
                    default: return false
                    }
                }
                if !beaten { violation(.acknowledgedWrites, "an acknowledged key-value write (\(ShippedLedger.label(value))) was lost") }
            }
        }
        var compared: [[String: [UInt8]]] = []
        var asides: [Set<String>] = []
        for device in simulation.devices {
            var values = try device.keyValueValues()
            for value in values.values where !simulation.ledger.keyValueWrites.contains(value) {
                violation(.noInventedValue, "device \(device.index)'s key-value store holds a value never written")
            }
            var aside: Set<String> = []
            if ClientStateDatabase.exists(forKeychain: device.keychainPath) {
                let database = try ClientStateDatabase(keychainPath: device.keychainPath, create: false)
                let problems = Set(try database.problems(zone: device.settings.zone).map(\.item))
                let zone = try KeyValueZone(store: device.settings, keys: simulation.keys)
                aside = Set(ShippedSimulation.keyValueKeys.filter { problems.contains(zone.itemID($0).rawValue) })
            }
            for key in aside { values[key] = nil }
            compared.append(values)
            asides.append(aside)
        }
        for key in Set(compared.flatMap(\.keys)).union(asides.joined()).sorted() {
            let holders = compared.indices.filter { !asides[$0].contains(key) }
            if Set(holders.map { compared[$0][key] }).count > 1 {
                violation(.agreement, "the key-value stores of devices \(holders.map(String.init).joined(separator: ", ")) disagree on \(key)")
            }
        }
    }

    /// How many items the devices kept and reported because a full resync no longer listed them.
    func unlistedKept() throws -> Int {
        try simulation.devices.reduce(0) { $0 + (try keptWithoutEvidence($1)).count }
    }

    /// How many items the devices set aside at the end because the server refused them.
    func setAsideCount() throws -> Int {
        try simulation.devices.reduce(0) { $0 + (try setAside($1)).count }
    }

    /// The values whose deletion the deleting device lost with its sync state: it had no state of
    /// the item when it deleted, or it enrolled again before the server took the deletion.
    func droppedDeletions(_ observed: ShippedLedger.Observed) -> Set<[UInt8]> {
        var dropped: Set<[UInt8]> = []
        for deletion in simulation.ledger.deletions {
            guard let value = deletion.replaced, let deviceID = deletion.deviceID, let item = deletion.item else { continue }
            let enrolledAgain = simulation.devices[deletion.device].device != deviceID
            let taken = observed.tookDeletion(of: "\(item)", by: "\(deviceID)", over: value)
            if !deletion.stateHadItem || (enrolledAgain && !taken) { dropped.insert(value) }
        }
        return dropped
    }

    /// The names of the items `device` kept and reported because a full resync no longer listed
    /// them (absence is not deletion, decision 0106).
    private func keptWithoutEvidence(_ device: ShippedDevice) throws -> [String] {
        try problemItems(device) { $0 == SyncRoundReport.unlistedProblem }
    }

    /// The names of the items `device` set aside, a per-item problem, because the server refused
    /// them or they seal larger than it takes (decision 0105).
    private func setAside(_ device: ShippedDevice) throws -> [String] {
        let refusals = Set(ItemRefusal.allCases.map(\.explanation))
        return try problemItems(device) { refusals.contains($0) || $0.hasPrefix("too large to sync") }
    }

    /// The names of the items with a problem whose reason `matches`: every synchronizable item the
    /// run writes, whether the keychain still holds it or not (a deletion set aside is a problem of
    /// an item the keychain no longer shows).
    private func problemItems(_ device: ShippedDevice, matching matches: (String) -> Bool) throws -> [String] {
        guard ClientStateDatabase.exists(forKeychain: device.keychainPath) else { return [] }
        let database = try ClientStateDatabase(keychainPath: device.keychainPath, create: false)
        let items = Set(try database.problems(zone: .keychain).filter { matches($0.reason) }.map(\.item))
        guard !items.isEmpty else { return [] }
        return (0..<simulation.configuration.items).compactMap { index in
            let attributes = ShippedSimulation.syncedAttributes("item-\(index)")
            let key = PrimaryKey(itemClass: .genericPassword, attributes: attributes)
            return items.contains(simulation.sealer.itemID(of: key).rawValue) ? ShippedDevice.name(attributes) : nil
        }
    }
}

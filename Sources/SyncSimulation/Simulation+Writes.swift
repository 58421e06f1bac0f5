import SyncCore

extension Simulation {
    /// A user adds, updates or deletes an item on a random device (online or not): usually a
    /// synchronizable item of a random zone, sometimes one that must never leave the device.
    mutating func userWrite() {
        let index = random.below(devices.count)
        let modifiedAt = now + devices[index].clockSkew
        if random.chance(percent: 12) {
            localOnlyWrite(on: index, modifiedAt: modifiedAt)
            return
        }
        ledger.statistics.writes += 1
        let zone = random.pick(configuration.zones)
        if zone.isKeyValueStore { ledger.statistics.keyValueWrites += 1 }
        let item = ItemID("item-\(random.below(configuration.itemsPerZone))")
        let current = devices[index].keychain[zone]?[item]
        let content: [UInt8]? = current != nil && random.chance(percent: 40) ? nil : ledger.freshContent(localOnly: false)
        devices[index].keychain[zone, default: [:]][item] = content
        // Written over the version the keychain holds, which a crash may have put ahead of the state.
        let basedOn = configuration.ignoresAppliedVersions ? VersionVector() : devices[index].appliedVersions[zone]?[item] ?? VersionVector()
        let change = LocalChange(item: item, scope: .synchronizable, content: content, modifiedAt: modifiedAt, basedOn: basedOn)
        let actions = devices[index].machines[zone]!.localChange(change)
        devices[index].commit(zone)
        let vector = devices[index].machines[zone]!.state.records[item]?.version.vector
        let write = SimulationLedger.Write(
            device: index, zone: zone, item: item, vector: vector, isDeletion: content == nil, replaced: current
        )
        if let content { ledger.updates[content] = write } else if current != nil { ledger.deletions.append(write) }
        let what = content == nil ? "deletes" : "writes #\(ledger.nextContent) over \(current == nil ? "nothing" : "a copy")"
        trace(zone, item, "\(devices[index].id) user \(what) \(vector?.description ?? "")")
        perform(actions, device: index, zone: zone)
    }

    private mutating func localOnlyWrite(on index: Int, modifiedAt: Int64) {
        ledger.statistics.localOnlyWrites += 1
        let item = ItemID("local-\(index)-\(random.below(3))")
        let scope: LocalChange.Scope = random.chance(percent: 50) ? .local : .thisDeviceOnly
        let content: [UInt8]? = random.chance(percent: 20) ? nil : ledger.freshContent(localOnly: true)
        devices[index].localOnly[item] = content
        if let content { ledger.localOnly[content] = index }
        // Fed to the machine like any journal entry: it must keep it on the device.
        for zone in configuration.zones {
            let change = LocalChange(item: item, scope: scope, content: content, modifiedAt: modifiedAt)
            let actions = devices[index].machines[zone]!.localChange(change)
            devices[index].commit(zone)
            perform(actions, device: index, zone: zone)
        }
    }
}

import KeychainModel
import KeychainStore
import SyncClient
import SyncCore

/// A user's write, drawn first and made then: at once, or while a round of the device's driver
/// runs, right before it applies what it pulled (the window in which a local change races the
/// pulled versions, rule R20 of docs/sync-rules.md), as a user typing while the daemon syncs.
struct DrawnWrite: Sendable {
    enum Target: Sendable, Equatable {
        /// A keychain item: one the run syncs, or one that never leaves its device.
        case item(account: String, localOnly: Bool)
        /// A key of the device's key-value store.
        case key(String)
    }

    var target: Target
    /// Whether it deletes the item (removes the key) when there is one; else it writes `value`.
    var deletes: Bool
    var value: [UInt8]
}

/// A drawn write as made: the value it replaced (nil: none) and whether it deleted.
struct MadeWrite: Sendable {
    var drawn: DrawnWrite
    var replaced: [UInt8]?
    var deleted: Bool
}

extension ShippedSimulation {
    /// A user adds, changes or deletes an item on a device (online or not), or sets or removes a
    /// key of its key-value store; now and then an item that never leaves the device.
    mutating func userWrite(on index: Int) async throws {
        let drawn = drawWrite()
        let stateHadItem = try await stateHolds(drawn.target, on: index)
        record(try make(drawn, on: index), on: index, stateHadItem: stateHadItem)
    }

    mutating func drawWrite() -> DrawnWrite {
        if random.chance(percent: 25) {
            let key = Self.keyValueKeys[random.below(Self.keyValueKeys.count)]
            let deletes = random.chance(percent: 35)
            ledger.nextValue += 1
            return DrawnWrite(target: .key(key), deletes: deletes, value: Array("K\(ledger.nextValue)".utf8))
        }
        let localOnly = random.chance(percent: 10)
        let account = "item-\(random.below(configuration.items))"
        let deletes = random.chance(percent: 35)
        var value = ledger.freshValue(localOnly: localOnly)
        if !localOnly, random.chance(percent: configuration.largeWritePercent) {
            // A large secret: over a lowered server blob limit, and now and then over the client's.
            value += [UInt8](repeating: UInt8(ascii: "#"), count: random.chance(percent: 25) ? VersionSealer.serverBlobLimit : 2_000)
            ledger.statistics.largeWrites += 1
        }
        return DrawnWrite(target: .item(account: account, localOnly: localOnly), deletes: deletes, value: value)
    }

    /// Whether the device's sync state holds the synchronizable item `target` names (false for
    /// anything else): a deletion it makes without is lost with the state (the checker counts it).
    func stateHolds(_ target: DrawnWrite.Target, on index: Int) async throws -> Bool {
        guard case .item(let account, false) = target else { return false }
        return try await devices[index].stateHolds(itemID(of: account))
    }

    func itemID(of account: String) -> ItemID {
        sealer.itemID(of: PrimaryKey(itemClass: .genericPassword, attributes: Self.syncedAttributes(account)))
    }

    /// Makes `drawn` on the keychain or key-value store of the device at `index`, as its user would.
    func make(_ drawn: DrawnWrite, on index: Int) throws -> MadeWrite {
        try Self.make(drawn, on: devices[index], leaksLocalOnly: configuration.breakRule == .leakLocalOnly)
    }

    /// Makes `drawn` on `device`; with `leaksLocalOnly` (the broken variant `leak-local-only`)
    /// local-only items are stored as synchronizable.
    static func make(_ drawn: DrawnWrite, on device: ShippedDevice, leaksLocalOnly: Bool) throws -> MadeWrite {
        switch drawn.target {
        case .key(let key):
            let current = try device.settings.string(forKey: key).map { Array($0.utf8) }
            if current != nil, drawn.deletes {
                _ = try device.settings.removeValue(forKey: key)
                return MadeWrite(drawn: drawn, replaced: current, deleted: true)
            }
            try device.settings.set(String(decoding: drawn.value, as: UTF8.self), forKey: key)
            return MadeWrite(drawn: drawn, replaced: current, deleted: false)
        case .item(let account, let localOnly):
            let service = localOnly ? localService : syncedService
            let synchronizable = !localOnly || leaksLocalOnly
            let query = Query(itemClass: .genericPassword, attributes: attributes(service, account), synchronizable: synchronizable ? .yes : .no)
            let current = try device.values(synchronizable: synchronizable)["\(service)/\(account)"]
            if current != nil, drawn.deletes {
                try device.keychain.delete(query)
                return MadeWrite(drawn: drawn, replaced: current, deleted: true)
            }
            if current == nil {
                var attributes = attributes(service, account)
                attributes.synchronizable = synchronizable
                _ = try device.keychain.add(Item(itemClass: .genericPassword, attributes: attributes, data: drawn.value))
            } else {
                try device.keychain.update(query, changes: ItemAttributes(), data: drawn.value)
            }
            return MadeWrite(drawn: drawn, replaced: current, deleted: false)
        }
    }

    /// Records a write `device` made in the ledger the checker judges by.
    mutating func record(_ made: MadeWrite, on index: Int, stateHadItem: Bool) {
        switch made.drawn.target {
        case .key(let key):
            let traced = "kv/\(key)" == Self.tracedItem
            if let current = made.replaced {
                ledger.left(device: index, value: current)
                ledger.keyValuesReplaced.insert(current)
            }
            if made.deleted {
                if traced { trace("  device \(index) user removes \(ShippedLedger.label(made.replaced ?? []))") }
                ledger.statistics.keyValueRemovals += 1
                return
            }
            if traced { trace("  device \(index) user sets \(ShippedLedger.label(made.drawn.value)) over \(made.replaced.map(ShippedLedger.label) ?? "nothing")") }
            ledger.keyValueWrites.insert(made.drawn.value)
            ledger.statistics.keyValueWrites += 1
        case .item(let account, let localOnly):
            let name = "\(localOnly ? Self.localService : Self.syncedService)/\(account)"
            if name == Self.tracedItem {
                trace("  device \(index) user \(made.deleted ? "deletes" : "writes \(ShippedLedger.label(made.drawn.value)) over") \(made.replaced.map(ShippedLedger.label) ?? "nothing")")
            }
            if !localOnly, let current = made.replaced { ledger.left(device: index, value: current) }
            if made.deleted {
                guard !localOnly else { return }
                ledger.deletions.append(.init(
                    device: index, name: name, replaced: made.replaced, deviceID: devices[index].device, stateHadItem: stateHadItem,
                    item: itemID(of: account)))
                ledger.statistics.deletions += 1
            } else if localOnly {
                ledger.localOnly[made.drawn.value] = index
                ledger.statistics.localOnlyWrites += 1
            } else {
                ledger.updates[made.drawn.value] = .init(device: index, name: name, replaced: made.replaced)
                ledger.statistics.writes += 1
            }
        }
    }

    /// The keys the run writes in the key-value stores.
    static let keyValueKeys = (0..<4).map { "key-\($0)" }
}

import Foundation
import KeychainModel
import KeychainStore
import SyncClient
import SyncCore

extension ShippedSimulation {
    mutating func runFaultyPhase() async throws {
        for step in 0..<configuration.operations {
            if step == configuration.operations / 4, configuration.malice == .fork { try startFork() }
            if step == configuration.operations / 4, configuration.malice == .staleEpoch { try await revokeKeepingTheEpochFromOthers() }
            clock.advance(by: Int64(random.number(in: 1...60_000)))
            let index = random.below(devices.count)
            let roll = random.below(100)
            trace("step \(step) device \(index) roll \(roll) online \(online[index])")
            switch roll {
            case 0..<38: try await userWrite(on: index)
            case 38..<66: try await sync(index)
            case 66..<70:
                devices[index].crash()
                ledger.statistics.crashes += 1
            case 70..<74: try await syncCrashingBetweenCommits(index)
            case 74..<78: online[index].toggle()
            case 78..<81:
                // A long absence: offline while the server collects without it.
                online[index] = false
                clock.advance(by: configuration.inactivityLimit * Int64(random.number(in: 1...3)))
            case 81..<86: try await collect()
            case 86..<88: try await enrolAgain(index)
            case 88..<90:
                // A clock a year ahead (or back in step).
                let ahead: Int64 = 365 * 24 * 3_600_000
                devices[index].skew.value = devices[index].skew.value == 0 ? ahead : 0
                ledger.statistics.clockJumps += 1
            default: clock.advance(by: Int64(random.number(in: 0...600_000)))
            }
        }
        ledger.statistics.lostMessages = observed.withLock { $0.lostMessages }
    }

    /// A user adds, changes or deletes an item on a device (online or not); now and then one that
    /// never leaves the device.
    mutating func userWrite(on index: Int) async throws {
        if random.chance(percent: 25) { return try keyValueWrite(on: index) }
        let keychain = devices[index].keychain
        let localOnly = random.chance(percent: 10)
        let service = localOnly ? Self.localService : Self.syncedService
        let account = "item-\(random.below(configuration.items))"
        let name = "\(service)/\(account)"
        // The broken variant `leak-local-only` stores local-only items as synchronizable.
        let synchronizable = !localOnly || configuration.breakRule == .leakLocalOnly
        let query = Query(itemClass: .genericPassword, attributes: Self.attributes(service, account), synchronizable: synchronizable ? .yes : .no)
        let current = try devices[index].values(synchronizable: synchronizable)[name]
        if current != nil, random.chance(percent: 35) {
            if name == Self.tracedItem { trace("  device \(index) user deletes \(String(decoding: current!, as: UTF8.self))") }
            if !localOnly {
                let item = sealer.itemID(of: PrimaryKey(itemClass: .genericPassword, attributes: Self.syncedAttributes(account)))
                let stateHadItem = try await devices[index].stateHolds(item)
                ledger.deletions.append(.init(
                    device: index, name: name, replaced: current, deviceID: devices[index].device, stateHadItem: stateHadItem, item: item))
                ledger.statistics.deletions += 1
            }
            try keychain.delete(query)
            if !localOnly, let current { ledger.left(device: index, value: current) }
            return
        }
        var value = ledger.freshValue(localOnly: localOnly)
        if !localOnly, random.chance(percent: configuration.largeWritePercent) {
            // A large secret: over a lowered server blob limit, and now and then over the client's.
            value += [UInt8](repeating: UInt8(ascii: "#"), count: random.chance(percent: 25) ? VersionSealer.serverBlobLimit : 2_000)
            ledger.statistics.largeWrites += 1
        }
        if name == Self.tracedItem { trace("  device \(index) user writes \(String(decoding: value, as: UTF8.self)) over \(current.map { String(decoding: $0, as: UTF8.self) } ?? "nothing")") }
        if current == nil {
            var attributes = Self.attributes(service, account)
            attributes.synchronizable = synchronizable
            _ = try keychain.add(Item(itemClass: .genericPassword, attributes: attributes, data: value))
        } else {
            try keychain.update(query, changes: ItemAttributes(), data: value)
            if !localOnly, let current { ledger.left(device: index, value: current) }
        }
        if localOnly {
            ledger.localOnly[value] = index
            ledger.statistics.localOnlyWrites += 1
        } else {
            ledger.updates[value] = .init(device: index, name: name, replaced: current)
            ledger.statistics.writes += 1
        }
    }

    /// The keys the run writes in the key-value stores.
    static let keyValueKeys = (0..<4).map { "key-\($0)" }

    /// A user sets or removes a key of the device's key-value store.
    mutating func keyValueWrite(on index: Int) throws {
        let settings = devices[index].settings
        let key = Self.keyValueKeys[random.below(Self.keyValueKeys.count)]
        let current = try settings.string(forKey: key).map { Array($0.utf8) }
        if let current { ledger.left(device: index, value: current) }
        let traced = "kv/\(key)" == Self.tracedItem
        if current != nil, random.chance(percent: 35) {
            if traced { trace("  device \(index) user removes \(String(decoding: current!, as: UTF8.self))") }
            _ = try settings.removeValue(forKey: key)
            ledger.statistics.keyValueRemovals += 1
            return
        }
        ledger.nextValue += 1
        let value = "K\(ledger.nextValue)"
        if traced { trace("  device \(index) user sets \(value) over \(current.map { String(decoding: $0, as: UTF8.self) } ?? "nothing")") }
        try settings.set(value, forKey: key)
        ledger.keyValueWrites.insert(Array(value.utf8))
        ledger.statistics.keyValueWrites += 1
    }

    /// The attributes of a synchronizable item's primary key, as the keychain stores it.
    static func syncedAttributes(_ account: String) -> ItemAttributes {
        var attributes = attributes(syncedService, account)
        attributes.synchronizable = true
        attributes.accessGroup = ItemRules.defaultAccessGroup
        return attributes
    }

    static func attributes(_ service: String, _ account: String) -> ItemAttributes {
        var attributes = ItemAttributes()
        attributes.service = service
        attributes.account = account
        return attributes
    }

    /// One round of the device's driver, if it is online; a failed round is what a user would see
    /// as "sync failed, retrying".
    mutating func sync(_ index: Int) async throws {
        guard online[index] else { return }
        // As `sync` does before its rounds: the log's new entries, and the epochs they bring.
        try devices[index].recordLog()
        let driver = try devices[index].driver(server: server(for: index))
        let keyValueDriver = try devices[index].keyValueDriver(server: server(for: index, keyValues: true))
        for round in [{ try await driver.round() }, { try await keyValueDriver.round() }] {
            ledger.statistics.rounds += 1
            do {
                _ = try await round()
            } catch {
                ledger.statistics.failedRounds += 1
                if (error as? SyncClientError)?.code == .untrustedAccountState { ledger.statistics.accountStateFindings += 1 }
            }
        }
        try await check(index)
    }

    /// A round whose process dies right after a keychain apply, before the state commit (B4).
    mutating func syncCrashingBetweenCommits(_ index: Int) async throws {
        guard online[index] else { return }
        try devices[index].recordLog()
        let driver = try devices[index].driver(server: server(for: index))
        struct Crash: Error {}
        await driver.setApplyHooks(after: { throw Crash() })
        ledger.statistics.rounds += 1
        do {
            _ = try await driver.round()
        } catch {
            ledger.statistics.crashesBetweenCommits += 1
        }
        devices[index].crash()
        try await check(index)
    }

    /// Collects tombstones as the server's schedule would, with the run's inactivity limit.
    mutating func collect() async throws {
        let activeSince = Date(timeIntervalSince1970: Double(clock.now - configuration.inactivityLimit) / 1000)
        for storage in storages {
            ledger.statistics.purgedTombstones += try await storage.collectGarbage(
                activeSince: activeSince, now: Date(timeIntervalSince1970: Double(clock.now) / 1000))
        }
        ledger.statistics.collections += 1
    }

    /// The device's sync state file is lost and it enrols again under a new ID; the keychain keeps
    /// its items (decision 0106) and its identity keys, so the earlier ID is retired (0241).
    mutating func enrolAgain(_ index: Int) async throws {
        generations[index] += 1
        let (device, retired) = try devices[index].loseStateAndEnrolAgain(generation: generations[index])
        try await register(device)
        for storage in storages { _ = try await storage.revokeDevice(retired, of: account, now: clock.date()) }
        for other in devices { try other.recordLog() }
        ledger.stateLost(device: index)
        ledger.statistics.reEnrolments += 1
    }

    /// The online check after a device's round.
    mutating func check(_ index: Int) async throws {
        let values = try devices[index].values(synchronizable: true)
        if let item = Self.tracedItem, item.hasPrefix("kv/") {
            let value = try devices[index].keyValueValues()[String(item.dropFirst(3))]
            trace("  device \(index) (\(devices[index].device)) shows \(value.map { String(decoding: $0, as: UTF8.self) } ?? "nothing")")
        } else if let item = Self.tracedItem {
            trace("  device \(index) (\(devices[index].device)) shows \(values[item].map { String(decoding: $0, as: UTF8.self) } ?? "nothing")")
            try await traceRecord(of: item, on: index)
        }
        let cameBack = ledger.cameBack.count
        ledger.check(device: index, shows: Set(values.values).union(try devices[index].keyValueValues().values))
        for (_, value) in ledger.cameBack.dropFirst(cameBack) { trace("  device \(index): \(ShippedLedger.label(value)) came back") }
    }

    /// The item `SHIPPED_TRACE` names (e.g. synced/item-2): its events are printed.
    static let tracedItem = ProcessInfo.processInfo.environment["SHIPPED_TRACE"]

    /// The ID of the traced keychain item in the zone `sealer` seals for; nil for a key-value
    /// key, or when nothing is traced.
    static func tracedItemID(sealer: VersionSealer) -> ItemID? {
        guard let name = tracedItem, name.hasPrefix(syncedService + "/"), sealer.zone == .keychain else { return nil }
        return sealer.itemID(of: PrimaryKey(itemClass: .genericPassword, attributes: syncedAttributes(String(name.dropFirst(syncedService.count + 1)))))
    }

    /// Prints the traced item's record in the device's sync state, if it has one.
    func traceRecord(of name: String, on index: Int) async throws {
        let account = String(name.dropFirst(Self.syncedService.count + 1))
        let item = sealer.itemID(of: PrimaryKey(itemClass: .genericPassword, attributes: Self.syncedAttributes(account)))
        guard let record = try await devices[index].record(of: item) else { return }
        func label(_ version: ItemVersion) -> String {
            let value = ItemContent.decode(version.content).flatMap(\.data).map(ShippedLedger.label) ?? "?"
            return version.isDeleted ? "deleted" : value
        }
        trace("    record: \(label(record.version)) \(record.version.vector) origin \(record.version.origin) at \(record.version.modifiedAt)"
            + "\(record.isPending ? " pending" : "")\(record.refusal.map { " aside (\($0))" } ?? "") baseline \(record.baseline) seen \(record.seen)")
        let database = try ClientStateDatabase(keychainPath: devices[index].keychainPath, create: false)
        for problem in try database.problems(zone: .keychain) where problem.item == item.rawValue { trace("    problem: \(problem.reason.prefix(40))") }
    }

    func trace(_ line: @autoclosure () -> String) {
        if Self.tracedItem != nil { print(line()) }
    }

    /// Heals every fault and syncs every device until a whole pass changes nothing. Messages of
    /// the faulty phase may still arrive: an answer held back then, delivered now in place of a
    /// fresh one, carries versions older than the device has (a server gone back, to the device),
    /// which it rejects; such a sync is tried once more.
    /// - Returns: Whether the devices settled.
    mutating func heal() async throws -> Bool {
        online = online.map { _ in true }
        faulty.value = false
        for device in devices { device.logServed.value = nil }
        var findings: [Int: String] = [:]
        for _ in 0..<8 {
            var changed = 0
            findings = [:]
            for index in devices.indices {
                let driver = try devices[index].driver(server: server(for: index))
                let keyValueDriver = try devices[index].keyValueDriver(server: server(for: index, keyValues: true))
                try devices[index].recordLog()
                for (zone, sync) in [("", { try await driver.syncUntilInStep(maximumRounds: 40) }), (" (key-value store)", { try await keyValueDriver.syncUntilInStep(maximumRounds: 40) })] {
                    for attempt in 1...2 {
                        do {
                            let report = try await sync()
                            changed += report.pushed + report.applied
                            break
                        } catch let error as SyncClientError where error.code == .rejectedVersions && attempt == 1 {
                            ledger.statistics.rejectedLateAnswers += 1
                        } catch let error as SyncClientError where error.code == .untrustedAccountState {
                            // What the device was served fell short of another device's statement:
                            // a late answer of the faulty phase, or the statement of a device that
                            // was itself served less and has not read the feed again yet. Reported,
                            // nothing applied, the next round reads the whole feed again; the pass
                            // goes on, and the devices must settle in a later one.
                            ledger.statistics.accountStateFindings += 1
                            findings[index] = "device \(index) failed to sync\(zone) after the faults healed: \(error)"
                            changed += 1
                            break
                        } catch {
                            let underlying = (error as? SyncClientError)?.underlying.map { " (\($0))" } ?? ""
                            ledger.incidents.append("device \(index) failed to sync\(zone) after the faults healed: \(error)\(underlying)")
                            return false
                        }
                    }
                }
                try await check(index)
            }
            if changed == 0 { return true }
        }
        ledger.incidents += findings.sorted { $0.key < $1.key }.map(\.value)
        return false
    }
}

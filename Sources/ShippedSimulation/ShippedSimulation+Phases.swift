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
            if step == configuration.operations / 4, configuration.restores { try backUpTheServer() }
            if step == configuration.operations / 2, configuration.restores { try await restoreTheServer() }
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
            case 70..<74: try await syncCrashingBetweenCommits(index, afterApply: roll - 69)
            case 74..<78: online[index].toggle()
            case 78..<81:
                // A long absence: offline while the server collects without it.
                online[index] = false
                clock.advance(by: configuration.inactivityLimit * Int64(random.number(in: 1...3)))
            case 81..<86: try await collect()
            case 86..<88: try await enrolAgain(index)
            case 88..<90:
                // The device's clock jumps: back in step, off within the window stamps are taken
                // at face value (R17), a year ahead, or back (behind the server's by hours or a year).
                let year: Int64 = 365 * 24 * 3_600_000
                let window = ModificationTimeBound.window
                let skews = [0, Int64(random.number(in: 0...Int(2 * window))) - window, year, -Int64(random.number(in: 1...48)) * 3_600_000, -year]
                devices[index].skew.value = skews[random.below(skews.count)]
                ledger.statistics.clockJumps += 1
            case 90: try await revoke()
            default: clock.advance(by: Int64(random.number(in: 0...600_000)))
            }
        }
        ledger.statistics.lostMessages = observed.withLock { $0.lostMessages }
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
        // Now and then the user writes while the round runs: right before it applies what it
        // pulled (R20); when it pulls nothing, right after it.
        let during = random.chance(percent: 20) ? drawWrite() : nil
        let made = Locked<MadeWrite?>(nil)
        if let during {
            let device = devices[index], leaksLocalOnly = configuration.breakRule == .leakLocalOnly
            let write: @Sendable () throws -> Void = {
                guard made.value == nil else { return }
                made.value = try Self.make(during, on: device, leaksLocalOnly: leaksLocalOnly)
            }
            if case .key = during.target { await keyValueDriver.setApplyHooks(before: write) } else { await driver.setApplyHooks(before: write) }
        }
        var stateHadItem = false
        if let during { stateHadItem = try await stateHolds(during.target, on: index) }
        for round in [{ try await driver.round() }, { try await keyValueDriver.round() }] {
            ledger.statistics.rounds += 1
            do {
                _ = try await round()
            } catch {
                ledger.statistics.failedRounds += 1
                switch (error as? SyncClientError)?.code {
                case .untrustedAccountState: ledger.statistics.accountStateFindings += 1
                case .rejectedVersions: ledger.statistics.rejectedRounds += 1
                default: break
                }
            }
        }
        if let during {
            await driver.setApplyHooks()
            await keyValueDriver.setApplyHooks()
            if let concurrent = made.value {
                record(concurrent, on: index, stateHadItem: stateHadItem)
                ledger.statistics.writesDuringRounds += 1
            } else {
                record(try make(during, on: index), on: index, stateHadItem: try await stateHolds(during.target, on: index))
            }
        }
        try await check(index)
    }

    /// A round whose process dies right after its `count`th keychain apply (1–4), before the state
    /// commit (B4); from the second on, the apply may be one made while a batch is out (R32).
    /// A round with fewer applies ends, and the process dies after it.
    mutating func syncCrashingBetweenCommits(_ index: Int, afterApply count: Int) async throws {
        guard online[index] else { return }
        try devices[index].recordLog()
        let driver = try devices[index].driver(server: server(for: index))
        struct Crash: Error {}
        let applies = Locked(0)
        await driver.setApplyHooks(after: {
            if applies.withLock({ $0 += 1; return $0 }) == count { throw Crash() }
        })
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
                            trace("  heal: device \(index)\(zone) pushed \(report.pushed) applied \(report.applied)")
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
                            trace("  heal: device \(index)\(zone) \(error)")
                            findings[index] = "device \(index) failed to sync\(zone) after the faults healed: \(error)"
                            changed += 1
                            break
                        } catch {
                            let underlying = (error as? SyncClientError)?.underlying.map { " (\($0))" } ?? ""
                            trace("  heal: device \(index)\(zone) \(error)\(underlying)")
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

import Foundation
import KeychainCrypto
import KeychainModel
import KeychainStore
import KeyValueStore
import Logging
import SyncClient
import SyncCore
import SyncServer
import SyncTesting

/// A deterministic run of a shared group's items (decision 0295) as the code we ship syncs them:
/// two accounts, Alice (the owner) and Bob (a member), with two devices each; each device a real
/// group keychain (every item synchronizable) and a real sync state file, synced by the shipped
/// ``ZoneDriver`` with the group's sealer, the witness over the group log (0291, 0294) and the
/// keychain's own local side, over the loopback to the real SQLite storage under the group's
/// hidden account (0290). Random writes and syncs, devices going offline and coming back, lost
/// requests and answers; while Bob's devices are offline, Alice removes him (vouching for his
/// blobs, 0293, and a new key epoch) and adds him back. Each sync reads the group log the server
/// serves, as every `sync-client` command does. Then the faults heal, every member's device syncs
/// until nothing changes, and the run is judged (``ShippedGroupSimulation/violations()``).
///
/// A malicious server (``GroupMalice``, one seed in two with `--malice`) either keeps Bob's
/// removal from Bob's devices and keeps serving them the group's zone — they go on writing under
/// the epoch he was removed from, and those writes must reach no device of Alice's — or hides
/// half the items from Bob's devices while the faults last, which Alice's statements show them.
package struct ShippedGroupSimulation {
    package struct Configuration: Sendable {
        package var seed: UInt64
        package var operations = 120
        package var directory: String
        /// What the server does maliciously (nil: nothing; `sync-simulate --groups --malice` sets
        /// ``GroupMalice/of(seed:)``).
        package var malice: GroupMalice?
        /// Alice's devices take every writer's versions (no witness, so no group log admits them):
        /// the broken variant that shows the checker catches a removed member's writes.
        package var admitsEveryWriter = false
        /// Alice's devices seal under the group's first key whatever epoch the log reached: the
        /// broken variant that shows the checker catches a removed member reading what was
        /// written after its removal.
        package var sealsUnderTheFirstEpoch = false
        /// Bob's devices keep the group when they find him out of it: the broken variant that
        /// shows the checker catches a departed device holding the group's items.
        package var keepsDepartedGroups = false

        package init(seed: UInt64, directory: String) {
            self.seed = seed
            self.directory = directory
        }
    }

    /// One device of the run: the group's keychain where the shipped code keeps it, beside the
    /// account's keychain path, and the account's sync state file.
    final class Device: Sendable {
        let account: Int
        let index: Int
        let device: DeviceID
        /// Where the account's keychain would be (the group's files are named after it).
        let accountKeychainPath: String
        let keychain: Keychain
        let database: ClientStateDatabase

        init(account: Int, index: Int, group: [UInt8], directory: String, clock: SimulatedClock) throws {
            self.account = account
            self.index = index
            device = DeviceID("group-device-\(account)-\(index)")!
            accountKeychainPath = directory + "/device-\(account)-\(index)/keychain.db"
            var configuration = Keychain.Configuration()
            configuration.everyItemSynchronizable = true
            configuration.runtimeDirectory = directory + "/runtime-\(account)-\(index)"
            configuration.now = { clock.date() }
            keychain = try Keychain.open(at: SharedGroupDirectory.keychainPath(of: group, besideKeychainAt: accountKeychainPath), configuration: configuration)
            database = try ClientStateDatabase(keychainPath: accountKeychainPath, create: true)
        }
    }

    static let service = "shared"
    static let accounts = ["alice", "bob"]

    let configuration: Configuration
    var random: SplitMix64
    let faults: Locked<SplitMix64>
    let faulty = Locked(true)
    let clock = SimulatedClock()
    let storage: SQLiteStorage
    /// The group's hidden account on the server.
    let zoneAccount: AccountID
    let identities: [AccountIdentity]
    let group: [UInt8]
    /// The group's log as Alice's devices append to it, and its current key.
    var log: GroupLog
    var key: GroupKey
    /// The log Bob's devices are served while the malicious server keeps his removal from them.
    var staleForBob: GroupLog?
    var devices: [Device] = []
    var online: [Bool]
    /// The devices that learnt their account is out of the group and forgot it (decision 0299):
    /// their user's writes to it are refused, as the keychain tool refuses them, until a sync
    /// finds the account a member again.
    var departed: Set<Int> = []
    /// Every value a device wrote: the account that wrote it, whether that account was a member
    /// then (by the log the server keeps), and how many times Bob had been added back by then.
    var written: [String: (account: Int, member: Bool, additions: Int)] = [:]
    /// The values Alice's devices wrote since Bob's latest removal, while he was out.
    var writtenWhileBobWasOut: Set<String> = []
    /// What Bob's devices held, synced while he was out, of what Alice wrote meanwhile.
    var readWhileOut: [String] = []
    var statistics = ShippedGroupStatistics()
    let directory: String

    /// The group's items zone and its blobs' account, named as the shipped code names them.
    var zone: ZoneID { GroupItems.zone(of: group) }
    var context: String { Groups.context(of: group) }

    package static func run(_ configuration: Configuration) async throws -> ShippedGroupResult {
        var simulation = try await ShippedGroupSimulation(configuration: configuration)
        defer { try? FileManager.default.removeItem(atPath: simulation.directory) }
        for _ in 0..<configuration.operations { try await simulation.step() }
        let settled = try await simulation.heal()
        var violations = try simulation.violations()
        simulation.statistics.reportedItems = try simulation.devices.reduce(0) { $0 + (try simulation.reportedItems(on: $1)).count }
        if let settled { violations.insert(.init(property: .settles, message: settled), at: 0) }
        return ShippedGroupResult(violations: violations, statistics: simulation.statistics)
    }

    init(configuration: Configuration) async throws {
        self.configuration = configuration
        random = SplitMix64(seed: configuration.seed)
        faults = Locked(SplitMix64(seed: configuration.seed ^ 0x6A0F_FA17))
        directory = configuration.directory + "/group-\(configuration.seed)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory + "/server", withIntermediateDirectories: true)
        storage = try SQLiteStorage(directory: URL(fileURLWithPath: directory + "/server"))
        zoneAccount = try await storage.createLoopbackAccount(named: "\u{1F}group simulated", now: clock.date())
        var bytes = SplitMix64(seed: configuration.seed ^ 0x0A11_CEB0)
        identities = try Self.accounts.map { name in
            let key = try AccountKey(rawRepresentation: (0..<4).flatMap { _ in withUnsafeBytes(of: bytes.next().littleEndian, Array.init) })
            return AccountIdentity(account: name, epoch: 1, accountKey: key)
        }
        group = (0..<GroupLogEntry.groupIDLength).map { _ in UInt8(truncatingIfNeeded: bytes.next()) }
        (log, key) = try GroupLog.creating(group: group, by: identities[0])
        try log.append(try log.adding(try identities[1].card(), role: .member, key: key, by: identities[0]))
        for account in 0..<2 {
            for index in 0..<2 {
                let device = try Device(account: account, index: index, group: group, directory: directory, clock: clock)
                devices.append(device)
                try await storage.registerLoopbackDevice(device.device, of: zoneAccount, now: clock.date())
            }
        }
        online = Array(repeating: true, count: devices.count)
    }

    // MARK: - Steps

    /// Set `GROUP_TRACE` to print every step of a run.
    static let traces = ProcessInfo.processInfo.environment["GROUP_TRACE"] != nil
    func trace(_ line: @autoclosure () -> String) { if Self.traces { print(line()) } }

    mutating func step() async throws {
        clock.advance(by: Int64(random.number(in: 1...5_000)))
        let index = random.below(devices.count)
        switch random.below(100) {
        case 0..<40: try write(on: index)
        case 40..<80: if online[index] { _ = try await sync(index) }
        case 80..<90: online[index].toggle()
        default: try await changeMembership()
        }
    }

    /// A user's add, change or deletion of one of six items on device `index`.
    mutating func write(on index: Int) throws {
        guard !departed.contains(index) else { return }
        let device = devices[index]
        let account = "item\(random.below(6))"
        var key = ItemAttributes()
        key.service = Self.service
        key.account = account
        let query = Query(itemClass: .genericPassword, attributes: key, synchronizable: .any)
        if random.chance(percent: 20) {
            do {
                try device.keychain.delete(query)
            } catch {
                guard error.code == .itemNotFound else { throw error }
            }
            statistics.deletions += 1
            trace("device \(index) deletes \(account)")
            return
        }
        let value = "v\(written.count)-\(device.account)"
        trace("device \(index) writes \(account) = \(value)")
        written[value] = (device.account, log.members[Self.accounts[device.account]] != nil, statistics.additions)
        if device.account == 0, log.members[Self.accounts[1]] == nil { writtenWhileBobWasOut.insert(value) }
        do {
            try device.keychain.add(Item.genericPassword(service: Self.service, account: account, data: Array(value.utf8)))
        } catch {
            guard error.code == .duplicateItem else { throw error }
            try device.keychain.update(query, changes: ItemAttributes(), data: Array(value.utf8))
        }
        statistics.writes += 1
    }

    /// Alice's first device, when online, removes Bob (reading the group's zone to vouch for his
    /// blobs) or adds him back; Bob's devices learn it at their next sync. A malicious server's
    /// hidden removal is final: Bob is not added back.
    mutating func changeMembership() async throws {
        guard staleForBob == nil else { return }
        if random.chance(percent: 30), let index = devices.indices.filter({ devices[$0].account == 1 && online[$0] && !departed.contains($0) }).first,
            log.members[Self.accounts[1]] != nil
        {
            return try await leave(from: index)
        }
        guard online[0] else { return }
        let alice = identities[0], bob = Self.accounts[1]
        if log.members[bob] != nil {
            var removed = log
            try removed.append(try log.removing(bob, current: key, by: alice).entry)
            let vouching = try await RevokedWrites.digests(
                in: [RevokedWrites.Zone(server: server(for: 0, untampered: true)(devices[0].device), sealer: sealer(for: alice, log: log))],
                log: log, revoked: removed, device: devices[0].device)
            let staleLog = log
            let (entry, newKey) = try log.removing(bob, current: key, by: alice, vouching: vouching)
            try log.append(entry)
            key = newKey
            writtenWhileBobWasOut = []
            if configuration.malice == .withheldRemoval {
                staleForBob = staleLog
            } else {
                for device in devices where device.account == 1 { try await storage.forgetDevice(device.device, of: zoneAccount) }
            }
            statistics.removals += 1
            trace("Alice removes Bob (vouching for \(vouching.count) blobs)")
        } else {
            // As `sync-client group invite` does: a leaver is not added back under the epoch its leave closed.
            try rekeyIfDue()
            try log.append(try log.adding(try identities[1].card(), role: .member, key: key, by: alice))
            for device in devices where device.account == 1 {
                if try await !storage.devices(of: zoneAccount).contains(where: { $0.id == device.device && $0.isActive }) {
                    try await storage.registerLoopbackDevice(device.device, of: zoneAccount, now: clock.date())
                }
            }
            statistics.additions += 1
            trace("Alice adds Bob back")
        }
    }

    /// Bob leaves the group from device `index`, as `sync-client group leave` does: the entry
    /// vouches for his blobs (read in full, decision 0297), the server forgets his devices' rows,
    /// and the device forgets the group at once; his other device learns it at its next sync, and
    /// Alice's next sync starts the epoch the leave makes due (0299).
    mutating func leave(from index: Int) async throws {
        let bob = identities[1], device = devices[index]
        var left = log
        try left.append(try log.leaving(by: bob, vouching: []))
        let vouching = try await RevokedWrites.digests(
            in: [RevokedWrites.Zone(server: server(for: index, untampered: true)(device.device), sealer: sealer(for: bob, log: log))],
            log: log, revoked: left, device: device.device)
        try log.append(try log.leaving(by: bob, vouching: vouching))
        writtenWhileBobWasOut = []
        for device in devices where device.account == 1 { try await storage.forgetDevice(device.device, of: zoneAccount) }
        try forgetGroup(on: index)
        statistics.leaves += 1
        trace("Bob leaves from device \(index) (vouching for \(vouching.count) blobs)")
    }

    /// Alice starts the key epoch the log says is due (after a leave), as a manager's device does
    /// at its sync and before an invitation (`Groups.rekeyedIfDue`).
    mutating func rekeyIfDue() throws {
        guard log.isDueRekey else { return }
        let (entry, newKey) = try log.rekeying(current: key, by: identities[0])
        try log.append(entry)
        key = newKey
        statistics.rekeys += 1
        trace("Alice re-keys the group")
    }

    /// Device `index`, its account out of the group, forgets it as the shipped code does (once:
    /// its keychain, opened again, is empty).
    mutating func forgetGroup(on index: Int) throws {
        let device = devices[index]
        if !configuration.keepsDepartedGroups, !departed.contains(index), try GroupDeparture.forget(group, besideKeychainAt: device.accountKeychainPath, state: device.database) {
            devices[index] = try Device(account: device.account, index: device.index, group: group, directory: directory, clock: clock)
            statistics.forgotten += 1
            trace("device \(index) forgets the group")
        }
        departed.insert(index)
    }

    /// The group log device `index` is served.
    func servedLog(to index: Int) -> GroupLog {
        devices[index].account == 1 ? staleForBob ?? log : log
    }

    /// The sealer of the group's zone for `identity`, over the keys `log` seals to it.
    func sealer(for identity: AccountIdentity, log: GroupLog) throws -> VersionSealer {
        VersionSealer(keys: try AccountKeys(groupKeys: try log.keys(for: identity)), account: context, zone: zone)
    }

    /// One `sync-client sync` of the group on device `index`: the log read first, then the group's
    /// items zone in step. Nil when the account is no longer a member (nothing synced, as
    /// `sync-client` skips the group); a failure is counted and thrown away.
    mutating func sync(_ index: Int) async throws -> SyncRoundReport? {
        let device = devices[index], identity = identities[device.account]
        // Alice manages the group: her sync starts the epoch a leave made due (0299).
        if device.account == 0 { try rekeyIfDue() }
        let log = servedLog(to: index)
        guard log.members[identity.account] != nil else {
            // Out of the group: the device forgets it as `sync-client` does, and keeps nothing.
            try forgetGroup(on: index)
            return nil
        }
        departed.remove(index)
        // The broken variant's devices of Alice's seal under the group's first key only.
        let stale = configuration.sealsUnderTheFirstEpoch && device.account == 0
        let keys = try AccountKeys(groupKeys: try log.keys(for: identity).filter { !stale || $0.key == 1 })
        let signer = try identity.versionSigner()
        let clock = clock
        let witness = try ZoneWitness(
            database: device.database, account: context, device: device.device, signingKey: signer.key, keys: keys,
            now: { clock.date() }, group: log)
        let sealer = VersionSealer(keys: keys, account: context, zone: zone)
        let broken = configuration.admitsEveryWriter && device.account == 0
        let driver = try ZoneDriver(
            local: KeychainZone(keychain: device.keychain, sealer: sealer, device: device.device), database: device.database,
            server: server(for: index)(device.device), sealer: sealer,
            device: device.device, witness: broken ? nil : witness,
            logger: Logger(label: "group-simulation") { _ in SwiftLogNoOpLogHandler() })
        statistics.syncs += 1
        do {
            let report = try await driver.syncUntilInStep(maximumRounds: 40)
            trace("device \(index) synced: pushed \(report.pushed), applied \(report.applied)")
            try noteReadWhileOut(on: index)
            return report
        } catch let error as SyncClientError where error.code == .rejectedVersions && configuration.malice != nil {
            // Versions the group log does not admit (Bob's, signed under the epoch he was
            // removed from): refused, kept out and reported, every other item applied.
            statistics.refused += 1
            trace("device \(index) refused: \(error)")
            return SyncRoundReport()
        } catch {
            trace("device \(index) sync failed: \(error)")
            statistics.failedSyncs += 1
            // Bob's device, kept from his removal, finds a later epoch in Alice's statements
            // (R30 for groups, decision 0294) and pushes nothing more.
            if staleForBob != nil, device.account == 1, "\(error)".contains("states key epoch") { statistics.withheldRemovalsFound += 1 }
            // Bob's device, served less than Alice's devices stated, says so (R62).
            if configuration.malice == .hiddenItems, device.account == 1, "\(error)".contains("did not serve") { statistics.hiddenItemsFound += 1 }
            if faulty.value { return nil }
            throw error
        }
    }

    /// What a device of Bob's, synced while he is out of the group (its server keeping his
    /// removal from it), holds of what Alice wrote since: judged at the end, when his devices
    /// have learnt the removal and forgotten the group.
    mutating func noteReadWhileOut(on index: Int) throws {
        guard devices[index].account == 1, log.members[Self.accounts[1]] == nil else { return }
        for (item, value) in try contents(of: devices[index]) where writtenWhileBobWasOut.contains(value) {
            readWhileOut.append("Bob's device \(index) held \(item) = \(value), written after his removal")
        }
    }

    /// The loopback of device `index`, losing requests and answers at random until the faults heal.
    func server(for index: Int, untampered: Bool = false) -> (DeviceID) -> LoopbackZoneServer {
        let faults = untampered ? nil : faults
        // While the faults last, the server hides half the items from Bob's devices (those
        // whose ID begins with a letter before "n").
        let hides = !untampered && configuration.malice == .hiddenItems && devices[index].account == 1
        let tampering = hides ? LoopbackZoneServer.Tampering(page: { [faulty] page in
            guard faulty.value else { return page }
            return page.filter { $0.item.rawValue.first.map { $0 >= "n" } ?? true }
        }) : nil
        return { [storage, zoneAccount, zone, clock, faulty] device in
            LoopbackZoneServer(
                storage: storage, account: zoneAccount, device: device, zone: zone, pageItems: 5, pageBytes: 64 << 10,
                serverNow: { clock.date() }, deviceNow: { clock.date() },
                fault: { _, stage in
                    guard faulty.value, let faults else { return }
                    if faults.withLock({ $0.chance(percent: stage == .request ? 4 : 6) }) { throw LoopbackZoneServer.Lost() }
                },
                tampering: tampering)
        }
    }
}

/// What a malicious server does in a shared group's run.
package enum GroupMalice: String, Sendable, CaseIterable {
    /// Keeps Bob's removal from his devices (the log as it was) and his devices in the zone.
    case withheldRemoval = "withheld-removal"
    /// Hides half the items from Bob's devices while the faults last.
    case hiddenItems = "hidden-items"

    /// The kind of `seed`'s server under `--malice`: none in odd seeds, then in turn.
    package static func of(seed: UInt64) -> GroupMalice? {
        seed % 2 == 1 ? nil : allCases[Int(seed / 2) % allCases.count]
    }
}

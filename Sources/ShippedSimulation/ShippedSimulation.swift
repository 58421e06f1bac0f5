import Foundation
import KeychainCrypto
import KeychainModel
import KeychainStore
import Synchronization
import SyncClient
import SyncCore
import SyncProtocol
import SyncServer
import SyncTesting

/// A deterministic run of the code we ship (issue 11, item 3): devices with real keychains and
/// real sync state files, synced by the shipped ``ZoneDriver`` over a loopback to the real SQLite
/// server storage, in a temporary directory. Random user writes, syncs and faults — requests and
/// answers lost, crashes (also between the keychain's commit and the state's), re-enrolment with
/// a lost state file, long absences with tombstone collection, a clock a year ahead, requests
/// delivered twice or late and answers held back and delivered in place of a later one, writes
/// too large for the server and a small byte quota in some seeds — then the faults heal, the
/// devices sync until nothing changes, and ``ShippedChecker`` judges the result.
package struct ShippedSimulation {
    package struct Configuration: Sendable {
        package var seed: UInt64
        /// Devices and items: 3 and 6, and in some seeds more (4 devices in one seed in seven,
        /// 20 items in one in five).
        package var devices: Int
        package var operations = 120
        package var items: Int
        /// How long a device may stay silent before collection stops waiting for it, ms.
        package var inactivityLimit: Int64 = 3_600_000
        /// Where the run's files go (a directory of its own is made inside).
        package var directory: String
        /// The account's byte quota (a small one in every third seed; else the default 100 MiB).
        package var maximumBytes: Int
        /// The largest blob the server takes: in even seeds below what the client checks before
        /// pushing (64 KiB), so the server itself refuses some writes `too_large`.
        package var maximumBlobBytes: Int
        /// The most payload bytes the server takes in one upload (its request-body limit): in one
        /// seed in five small enough that batches of a few large writes are refused `too_large`
        /// naming no item, and split by the client (decision 0224).
        package var maximumRequestBytes: Int
        /// Percent of user writes with a large secret: over the server's blob limit where it is
        /// lowered, and one in four over the client's own 64 KiB.
        package var largeWritePercent = 4
        /// Whether an answer held back reaches the device under the ID of the call it answered;
        /// the shipped transport stamps every answer with the current call's ID (decision 0172).
        package var lateAnswersKeepTheirIDs = false
        /// The rule the run breaks on purpose (nil: none), to show the checker catches it.
        package var breakRule: ShippedBreak? {
            didSet { if breakRule != nil { malice = nil } }
        }
        /// What the server does maliciously while the faults last (nil: nothing; `sync-simulate
        /// --malice` sets ``ShippedMalice/of(seed:)``).
        package var malice: ShippedMalice?
        /// The most collected deletions the server keeps a zone (R10a): below the default, it
        /// forgets deletions without evidence, and resyncs carry that time (R48, R49 C1, C2).
        package var collectedDeletionBound = FeedRule.maximumCollectedDeletions
        /// Whether the operator restores the server from a backup while the faults last (R9, R58):
        /// a backup a quarter of the way in, restored half-way, every device served the restored
        /// server from then on. Honest runs only.
        package var restores = false {
            didSet { if restores { malice = nil } }
        }

        package init(seed: UInt64, directory: String) {
            self.seed = seed
            self.directory = directory
            devices = seed % 7 == 3 ? 4 : 3
            items = seed % 5 == 1 ? 20 : 6
            maximumBytes = seed % 3 == 0 ? 2_500 : BatchMerge.Limits.defaultMaximumBytes
            maximumBlobBytes = seed % 2 == 0 ? 1_536 : VersionSealer.serverBlobLimit
            maximumRequestBytes = seed % 5 == 2 ? 1_000 : .max
        }
    }

    /// The service of the items that never leave their device.
    static let localService = "local"
    static let syncedService = "synced"
    /// The account's name, in every sealed blob and statement.
    static let accountName = "simulated"

    let configuration: Configuration
    var random: SplitMix64
    let faults: Locked<SplitMix64>
    /// Whether the loopbacks lose requests and answers (until the faults heal).
    let faulty = Locked(true)
    let clock = SimulatedClock()
    let storage: SQLiteStorage
    let account: AccountID
    /// Every epoch's key, for the run's own reading of what the server received (each device has
    /// its own keyring, decision 0252), and the sealer over it.
    let keys: AccountKeys
    let sealer: VersionSealer
    let log: ShippedAccountLog
    /// The latest key epoch a current member's statement named, among the statements the server
    /// served each device (by index), as that device's recorded log judges current members.
    let shownEpochs = Locked<[Int: UInt32]>([:])
    var devices: [ShippedDevice] = []
    var online: [Bool]
    var generations: [Int]
    let observed = Locked(ShippedLedger.Observed())
    /// The last live version of each item the pages served (for the broken variant that undoes deletions).
    let lastLive = Locked<[ItemID: SealedVersion]>([:])
    /// The join of the vectors of each item's versions the server answered as stored and dropped
    /// (for the broken variant that loses acknowledged writes and covers the loss up).
    let droppedVectors = Locked<[ItemID: VersionVector]>([:])
    /// The versions of each item the pages served, in order (for the malicious replays).
    let servedVersions = Locked<[ItemID: [[SealedVersion]]]>([:])
    /// The first statement of each device the server served (for the malicious replays), and
    /// the random source of the statements' tampering.
    let earlierStatements = Locked<[DeviceID: StatementMessage]>([:])
    let statementFaults: Locked<SplitMix64>
    /// The copy of the server's storage a malicious server serves some devices (``ShippedMalice/fork``).
    let forked = Locked<(storage: SQLiteStorage, group: Set<Int>)?>(nil)
    /// The server's storage restored from a backup (``Configuration/restores``), once restored.
    let restored = Locked<SQLiteStorage?>(nil)
    var ledger = ShippedLedger()
    let directory: String

    package static func run(_ configuration: Configuration) async throws -> ShippedResult {
        var simulation = try await ShippedSimulation(configuration: configuration)
        defer { try? FileManager.default.removeItem(atPath: simulation.directory) }
        try await simulation.runFaultyPhase()
        let settled = try await simulation.heal()
        let checker = ShippedChecker(simulation: simulation)
        var violations = try checker.violations()
        if !settled { violations.insert(.init(property: .settles, message: "the devices did not settle after the faults healed"), at: 0) }
        var statistics = simulation.ledger.statistics
        let observed = simulation.observed.withLock { $0 }
        statistics.droppedDeletions = checker.droppedDeletions(observed).count
        statistics.unlistedKept = try checker.unlistedKept()
        statistics.record(observed)
        statistics.setAside = try checker.setAsideCount()
        return ShippedResult(violations: violations, statistics: statistics)
    }

    init(configuration: Configuration) async throws {
        self.configuration = configuration
        random = SplitMix64(seed: configuration.seed)
        faults = Locked(SplitMix64(seed: configuration.seed ^ 0x5EED_FA17))
        statementFaults = Locked(SplitMix64(seed: configuration.seed ^ 0x57A7_E3E7))
        directory = configuration.directory + "/shipped-\(configuration.seed)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory + "/server", withIntermediateDirectories: true)
        storage = try SQLiteStorage(directory: URL(fileURLWithPath: directory + "/server"), collectedDeletionBound: configuration.collectedDeletionBound)
        account = try await storage.createLoopbackAccount(named: "simulated", now: clock.date())
        // From the seed: item IDs are keyed by it and order what a batch pushes, so a random key
        // made the same seed run differently.
        var keyBytes = SplitMix64(seed: configuration.seed ^ 0xACC0_4E7)
        let accountKey = try AccountKey(rawRepresentation: (0..<4).flatMap { _ in withUnsafeBytes(of: keyBytes.next().littleEndian, Array.init) })
        keys = AccountKeys(accountKey: accountKey)
        sealer = VersionSealer(keys: keys, account: Self.accountName, zone: .keychain)
        log = ShippedAccountLog(account: Self.accountName, accountKey: accountKey)
        online = Array(repeating: true, count: configuration.devices)
        generations = Array(repeating: 0, count: configuration.devices)
        for index in 0..<configuration.devices {
            let device = try ShippedDevice(
                index: index, directory: directory, accountKey: accountKey, log: log, inactivityLimit: configuration.inactivityLimit, clock: clock)
            devices.append(device)
            try await register(device.device)
        }
    }

    func register(_ device: DeviceID) async throws {
        for storage in storages { try await storage.registerLoopbackDevice(device, of: account, now: clock.date()) }
    }

    /// The loopback of `device` for the keychain or the key-value store, losing requests and
    /// answers, delivering requests twice or late and answers late, at random until the faults heal;
    /// `untampered`, the server answers honestly even in a malicious run.
    func server(for index: Int, keyValues: Bool = false, untampered: Bool = false) -> (DeviceID) -> LoopbackZoneServer {
        let skew = devices[index].skew
        let limits = UploadLimits(maximumItemsPerAccount: 100_000, maximumBytesPerAccount: configuration.maximumBytes)
        var tampering = untampered ? nil : configuration.breakRule != nil ? (keyValues ? nil : tampering(for: index)) : malicious(for: index)
        if configuration.restores {
            let restored = restored
            tampering = tampering ?? .init()
            tampering?.fork = { restored.value }
        }
        let neverHeals = configuration.breakRule == .neverHeal
        let sealer = keyValues ? devices[index].keyValueSealer : sealer
        let shownEpochs = shownEpochs
        let tracedKey = Self.tracedItem.flatMap { $0.hasPrefix("kv/") && keyValues ? String($0.dropFirst(3)) : nil }
        let tracedID = Self.tracedItemID(sealer: sealer) ?? tracedKey.flatMap { try? KeyValueZone(store: devices[index].settings, keys: keys).itemID($0) }
        return { [storage, account, clock, faults, faulty, observed, configuration] device in
            LoopbackZoneServer(
                storage: storage, account: account, device: device, zone: sealer.zone, limits: limits,
                maximumBlobBytes: configuration.maximumBlobBytes, maximumRequestBytes: configuration.maximumRequestBytes,
                lateAnswersKeepTheirIDs: configuration.lateAnswersKeepTheirIDs, pageItems: 5, pageBytes: 64 << 10,
                serverNow: { clock.date() }, deviceNow: { clock.date(skew: skew.value) },
                fault: { call, stage in
                    guard faulty.value || neverHeals else { return }
                    let lost = faulty.value ? faults.withLock { $0.chance(percent: stage == .request ? 4 : 6) } : true
                    if lost {
                        if Self.tracedItem != nil { print("  \(device): \(call) \(stage) lost") }
                        observed.withLock { $0.lostMessages += 1 }
                        throw LoopbackZoneServer.Lost()
                    }
                },
                deliver: { call in
                    guard faulty.value else { return .once }
                    let delivery: LoopbackZoneServer.Delivery = switch faults.withLock({ $0.below(100) }) {
                    case 0..<3: .twice
                    case 3..<5: .lateRequest
                    case 5..<7: .lateAnswer
                    default: .once
                    }
                    if delivery != .once { observed.withLock { $0.record(delivery, of: call) } }
                    if delivery != .once, Self.tracedItem != nil { print("  \(device): \(call) delivered \(delivery)") }
                    return delivery
                },
                tampering: tampering,
                observe: { batch, response in
                    if let traced = tracedID {
                        for (pushed, result) in zip(batch.items, response.results) where pushed.item == traced {
                            let stamp = (try? sealer.open(pushed.version.payload, item: pushed.item, vector: pushed.version.vector, deleted: pushed.version.isDeleted))?.modifiedAt
                            print("  \(device): pushed \(pushed.version.vector)\(pushed.version.isDeleted ? " (deleted)" : "") at \(stamp.map { "\($0)" } ?? "?"): \(response.status) \(result.outcome)")
                        }
                    }
                    observed.withLock { $0.record(batch, response: response, sealer: sealer, keyValues: keyValues) }
                },
                sent: { batch in
                    // Judged when sent: a request the network delivers late was sealed before.
                    let shown = shownEpochs.withLock { $0[index] } ?? VersionSealer.firstEpoch
                    observed.withLock { $0.recordEpochs(of: batch, shown: shown, device: index) }
                })
        }
    }
}

/// What a run found.
package struct ShippedResult: Sendable {
    package var violations: [ShippedViolation]
    package var statistics: ShippedStatistics
}

import Foundation
import KeychainCrypto
import KeychainModel
import KeychainStore
import Synchronization
import SyncClient
import SyncCore
import SyncServer
import SyncSimulation
import SyncTesting

/// A deterministic run of the code we ship (issue 11, item 3): devices with real keychains and
/// real sync state files, synced by the shipped ``ZoneDriver`` over a loopback to the real SQLite
/// server storage, in a temporary directory. Random user writes, syncs and faults — requests and
/// answers lost, crashes (also between the keychain's commit and the state's), re-enrolment with
/// a lost state file, long absences with tombstone collection, a clock a year ahead — then the
/// faults heal, the devices sync until nothing changes, and ``ShippedChecker`` judges the result.
package struct ShippedSimulation {
    package struct Configuration: Sendable {
        package var seed: UInt64
        package var devices = 3
        package var operations = 120
        package var items = 6
        /// How long a device may stay silent before collection stops waiting for it, ms.
        package var inactivityLimit: Int64 = 3_600_000
        /// Where the run's files go (a directory of its own is made inside).
        package var directory: String

        package init(seed: UInt64, directory: String) {
            self.seed = seed
            self.directory = directory
        }
    }

    /// The service of the items that never leave their device.
    static let localService = "local"
    static let syncedService = "synced"

    let configuration: Configuration
    var random: SplitMix64
    let faults: Locked<SplitMix64>
    /// Whether the loopbacks lose requests and answers (until the faults heal).
    let faulty = Locked(true)
    let clock = SimulatedClock()
    let storage: SQLiteStorage
    let account: AccountID
    let sealer: VersionSealer
    var devices: [ShippedDevice] = []
    var online: [Bool]
    var generations: [Int]
    let observed = Locked(ShippedLedger.Observed())
    var ledger = ShippedLedger()
    let directory: String

    package static func run(_ configuration: Configuration) async throws -> ShippedResult {
        var simulation = try await ShippedSimulation(configuration: configuration)
        defer { try? FileManager.default.removeItem(atPath: simulation.directory) }
        try await simulation.runFaultyPhase()
        let settled = try await simulation.heal()
        let checker = ShippedChecker(simulation: simulation)
        var violations = try checker.violations()
        if !settled { violations.insert("the devices did not settle after the faults healed", at: 0) }
        var statistics = simulation.ledger.statistics
        let observed = simulation.observed.withLock { $0 }
        statistics.conflictsKept = observed.conflictsKept
        statistics.droppedDeletions = checker.droppedDeletions(observed).count
        statistics.unlistedKept = try checker.unlistedKept()
        return ShippedResult(seed: configuration.seed, violations: violations, statistics: statistics)
    }

    init(configuration: Configuration) async throws {
        self.configuration = configuration
        random = SplitMix64(seed: configuration.seed)
        faults = Locked(SplitMix64(seed: configuration.seed ^ 0x5EED_FA17))
        directory = configuration.directory + "/shipped-\(configuration.seed)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory + "/server", withIntermediateDirectories: true)
        storage = try SQLiteStorage(directory: URL(fileURLWithPath: directory + "/server"))
        let newAccount = NewAccount(name: "simulated", credentials: AccountCredentials(
            verifier: [1], kdfParameters: Array(#"{"algorithm":"scrypt"}"#.utf8), salt: [UInt8](repeating: 1, count: 16),
            wrappedAccountKey: [2], wrappedRecoveryKey: [3]))
        try await storage.createAccount(newAccount, now: clock.date())
        account = newAccount.id
        sealer = VersionSealer(keys: AccountKeys(accountKey: .generate()), account: "simulated", zone: .keychain)
        online = Array(repeating: true, count: configuration.devices)
        generations = Array(repeating: 0, count: configuration.devices)
        for index in 0..<configuration.devices {
            let device = try ShippedDevice(index: index, directory: directory, sealer: sealer, clock: clock)
            devices.append(device)
            try await register(device.device)
        }
    }

    func register(_ device: DeviceID) async throws {
        _ = try await storage.registerDevice(
            NewDevice(account: account, id: device, name: device.rawValue, tokenHash: Array(device.rawValue.utf8)), maximumDevices: 1_000, now: clock.date())
    }

    /// The loopback of `device`, losing requests and answers at random until the faults heal.
    func server(for index: Int) -> (DeviceID) -> LoopbackZoneServer {
        let skew = devices[index].skew
        return { [storage, account, clock, faults, faulty, observed, sealer] device in
            LoopbackZoneServer(
                storage: storage, account: account, device: device, zone: .keychain, pageItems: 5, pageBytes: 64 << 10,
                serverNow: { clock.date() }, deviceNow: { clock.date(skew: skew.value) },
                fault: { call, stage in
                    guard faulty.value else { return }
                    let lost = faults.withLock { $0.chance(percent: stage == .request ? 4 : 6) }
                    if lost {
                        observed.withLock { $0.lostMessages += 1 }
                        throw LoopbackZoneServer.Lost()
                    }
                },
                observe: { batch, response in
                    observed.withLock { $0.record(batch, response: response, sealer: sealer) }
                })
        }
    }
}

/// What a run found.
package struct ShippedResult: Sendable {
    package var seed: UInt64
    package var violations: [String]
    package var statistics: ShippedStatistics
}

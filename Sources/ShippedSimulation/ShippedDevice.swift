import Foundation
import KeychainCrypto
import KeychainModel
import KeychainStore
import KeyValueStore
import Logging
import Synchronization
import SyncClient
import SyncCore
import SyncServer
import SyncTesting

/// One device of the run: a real keychain, a real key-value store beside it and a real sync state
/// file in a directory of its own, synced by the shipped ``ZoneDriver``s (one per zone) over
/// ``LoopbackZoneServer``s to the run's real server storage. A crash throws the drivers away and
/// makes new ones from the files, as a restarted process would.
final class ShippedDevice: Sendable {
    /// What lives in the device's process: its ID, the state database and the drivers.
    struct Process {
        var device: DeviceID
        var database: ClientStateDatabase?
        var driver: ZoneDriver<KeychainZone>?
        var keyValueDriver: ZoneDriver<KeyValueZone>?
    }

    /// The key-value store the run writes (zone `kv.settings`).
    static let keyValueStoreName = "settings"

    let index: Int
    let keychain: Keychain
    let keychainPath: String
    let sealer: VersionSealer
    let keyValues: KeyValueDatabase
    let settings: KeyValueStore
    let keyValueSealer: VersionSealer
    private let keys: AccountKeys
    /// The device's clock minus the run's, in milliseconds.
    let skew = Locked<Int64>(0)
    private let process: Mutex<Process>

    init(index: Int, directory: String, keys: AccountKeys, sealer: VersionSealer, clock: SimulatedClock) throws {
        self.index = index
        self.sealer = sealer
        self.keys = keys
        keychainPath = directory + "/device-\(index)/keychain.db"
        var configuration = Keychain.Configuration()
        configuration.runtimeDirectory = directory + "/runtime-\(index)"
        let skew = self.skew
        configuration.now = { clock.date(skew: skew.value) }
        keychain = try Keychain.open(at: keychainPath, configuration: configuration)
        keyValues = try KeyValueDatabase.open(besideKeychainAt: keychainPath, configuration: .init(now: { clock.date(skew: skew.value) }))
        settings = try keyValues.store(named: Self.keyValueStoreName)
        keyValueSealer = VersionSealer(keys: keys, account: "simulated", zone: settings.zone)
        process = Mutex(Process(device: DeviceID("device-\(index)-0")!))
    }

    var device: DeviceID { process.withLock { $0.device } }

    /// The process's state database, opened when there is none.
    private func database() throws -> ClientStateDatabase {
        if let database = process.withLock({ $0.database }) { return database }
        let database = try ClientStateDatabase(keychainPath: keychainPath, create: true)
        process.withLock { $0.database = database }
        return database
    }

    private static let configuration = ZoneSyncMachine.Configuration(pageSize: 7, maximumBatchSize: 5, maximumPushesPerRound: 4)
    private static let logger = Logger(label: "simulation", factory: { _ in SwiftLogNoOpLogHandler() })

    /// The keychain's driver, made from the files when there is none (a start, or a restart after a crash).
    func driver(server: (DeviceID) -> LoopbackZoneServer) throws -> ZoneDriver<KeychainZone> {
        if let driver = process.withLock({ $0.driver }) { return driver }
        let device = self.device
        let driver = try ZoneDriver(
            local: KeychainZone(keychain: keychain, sealer: sealer, device: device), database: database(), server: server(device),
            sealer: sealer, device: device, configuration: Self.configuration, logger: Self.logger)
        process.withLock { $0.driver = driver }
        return driver
    }

    /// The key-value store's driver, made as the client makes it: the store bound to the device first.
    func keyValueDriver(server: (DeviceID) -> LoopbackZoneServer) throws -> ZoneDriver<KeyValueZone> {
        if let driver = process.withLock({ $0.keyValueDriver }) { return driver }
        let device = self.device
        try keyValues.bind(toDevice: device)
        let driver = try ZoneDriver(
            local: KeyValueZone(store: settings, keys: keys), database: database(), server: server(device),
            sealer: keyValueSealer, device: device, configuration: Self.configuration, logger: Self.logger)
        process.withLock { $0.keyValueDriver = driver }
        return driver
    }

    /// Whether the keychain zone's sync state holds `item`: the running driver's, else the
    /// committed one; looking makes no driver (that would run a start-up before the run does).
    func stateHolds(_ item: ItemID) async throws -> Bool { try await record(of: item) != nil }

    /// The keychain zone's record of `item` in the running driver, else in the committed one;
    /// looking makes no driver (that would run a start-up before the run does).
    func record(of item: ItemID) async throws -> ZoneSyncState.Record? {
        if let driver = process.withLock({ $0.driver }) { return await driver.records[item] }
        guard ClientStateDatabase.exists(forKeychain: keychainPath) else { return nil }
        return try database().loadZone(.keychain, device: device, sealer: sealer).0.records[item]
    }

    /// Loses everything in memory: the next ``driver(server:)`` starts from the files.
    func crash() { process.withLock { $0 = Process(device: $0.device) } }

    /// Loses the sync state file as well and enrols again under a new device ID (the keychain
    /// keeps its items): the lost-state case of decision 0106.
    func loseStateAndEnrolAgain(generation: Int) throws -> DeviceID {
        let path = ClientStateDatabase.path(forKeychain: keychainPath)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.removeItem(atPath: path + suffix)
        }
        let device = DeviceID("device-\(index)-\(generation)")!
        process.withLock { $0 = Process(device: device) }
        return device
    }

    /// The store's values, as the run writes them (strings), by key.
    func keyValueValues() throws -> [String: [UInt8]] {
        try settings.dictionaryRepresentation().mapValues { Array(($0.stringValue ?? "?").utf8) }
    }

    // MARK: - What the device shows

    /// The data of every item, synchronizable or not, by its service and account.
    func values(synchronizable: Bool) throws -> [String: [UInt8]] {
        let query = Query(itemClass: .genericPassword, synchronizable: synchronizable ? .yes : .no, limit: .all, returns: [.data, .attributes])
        var values: [String: [UInt8]] = [:]
        let found = Result { () throws(KeychainError) in try keychain.find(query) }
        if case .failure(let error) = found, error.code == .itemNotFound { return [:] }
        for result in try found.get() {
            values[Self.name(result.attributes ?? ItemAttributes())] = result.data ?? []
        }
        return values
    }

    /// Every datum in the history of the synchronizable items `names` name (deleted ones too).
    func historyValues(accounts: [String]) throws -> [[UInt8]] {
        var values: [[UInt8]] = []
        for account in accounts {
            let key = PrimaryKey(itemClass: .genericPassword, attributes: ShippedSimulation.syncedAttributes(account))
            values += try keychain.historyVersions(of: key, includingData: true).compactMap(\.item.data)
        }
        return values
    }

    static func name(_ attributes: ItemAttributes) -> String { "\(attributes.service ?? "")/\(attributes.account ?? "")" }
}

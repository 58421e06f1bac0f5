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
        /// The keys it signs its statements with (a new pair for each ID it enrols under).
        var identity: DeviceIdentity
        var database: ClientStateDatabase?
        /// Shared by the process's zone drivers, as a session shares one (the log verified once).
        var witness: ZoneWitness?
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
    /// The device's keyring: the epochs of the log it recorded (decision 0252).
    private let keys: AccountKeys
    private let log: ShippedAccountLog
    /// How many of the log's entries the server serves the device (nil: all): a malicious server
    /// keeps a new epoch from it (``ShippedMalice/staleEpoch``).
    let logServed = Locked<Int?>(nil)
    /// The device's clock minus the run's, in milliseconds.
    let skew = Locked<Int64>(0)
    /// The device's clock.
    let now: @Sendable () -> Date
    /// The server's clock as the device tells it (the run's, exactly).
    private let serverNow: @Sendable () -> Date
    private let process: Mutex<Process>

    /// The server's device inactivity limit, ms: how long another device's statement counts.
    private let inactivityLimit: Int64

    init(
        index: Int, directory: String, accountKey: AccountKey, log: ShippedAccountLog, inactivityLimit: Int64,
        clock: SimulatedClock
    ) throws {
        self.index = index
        self.inactivityLimit = inactivityLimit
        keys = AccountKeys(accountKey: accountKey)
        sealer = VersionSealer(keys: keys, account: ShippedSimulation.accountName, zone: .keychain)
        self.log = log
        keychainPath = directory + "/device-\(index)/keychain.db"
        var configuration = Keychain.Configuration()
        configuration.runtimeDirectory = directory + "/runtime-\(index)"
        let skew = self.skew
        now = { clock.date(skew: skew.value) }
        serverNow = { clock.date() }
        configuration.now = now
        keychain = try Keychain.open(at: keychainPath, configuration: configuration)
        keyValues = try KeyValueDatabase.open(besideKeychainAt: keychainPath, configuration: .init(now: { clock.date(skew: skew.value) }))
        settings = try keyValues.store(named: Self.keyValueStoreName)
        keyValueSealer = VersionSealer(keys: keys, account: ShippedSimulation.accountName, zone: settings.zone)
        let device = DeviceID("device-\(index)-0")!
        process = Mutex(Process(device: device, identity: try log.join(device)))
    }

    var device: DeviceID { process.withLock { $0.device } }

    /// The process's state database, opened when there is none, with the device log recorded.
    private func database() throws -> ClientStateDatabase {
        if let database = process.withLock({ $0.database }) { return database }
        let database = try ClientStateDatabase(keychainPath: keychainPath, create: true)
        try save(servedLog(), in: database)
        process.withLock { $0.database = database }
        return database
    }

    /// Records the log's new entries the server serves, as `sync` does before its rounds once it
    /// read them.
    func recordLog() throws {
        guard let database = process.withLock({ $0.database }) else { return }
        try save(servedLog(), in: database)
    }

    /// The entries of the log the server serves the device.
    private func servedLog() -> [[UInt8]] {
        let entries = log.entries
        return logServed.value.map { Array(entries.prefix($0)) } ?? entries
    }

    /// Records `entries` and learns the keys of the epochs they hold (the device opens the wraps
    /// sealed to it, as `sync` does, decision 0179).
    private func save(_ entries: [[UInt8]], in database: ClientStateDatabase) throws {
        try database.saveVerifiedDeviceLog(entries)
        for (epoch, key) in log.keys(inFirst: entries.count) where keys.accountKey(epoch: epoch) == nil { keys.learn(key, epoch: epoch) }
    }

    /// The device's ID and identity keys.
    var identity: (device: DeviceID, identity: DeviceIdentity) { process.withLock { ($0.device, $0.identity) } }

    /// The witness of the device's zones: its statements signed with its identity, on the
    /// server's clock (as `sync` makes it, decision 0239), one per process as a session's.
    private func witness() throws -> ZoneWitness {
        let (device, identity, made) = process.withLock { ($0.device, $0.identity, $0.witness) }
        if let made { return made }
        let witness = try ZoneWitness(
            database: database(), account: ShippedSimulation.accountName, device: device, signingKey: identity.signingKey, keys: keys, now: serverNow,
            freshness: inactivityLimit)
        process.withLock { $0.witness = witness }
        return witness
    }

    private static let configuration = ZoneSyncMachine.Configuration(pageSize: 7, maximumBatchSize: 5, maximumPushesPerRound: 4)
    private static let logger = Logger(label: "simulation", factory: { _ in SwiftLogNoOpLogHandler() })

    /// The keychain's driver, made from the files when there is none (a start, or a restart after a crash).
    func driver(server: (DeviceID) -> LoopbackZoneServer) throws -> ZoneDriver<KeychainZone> {
        if let driver = process.withLock({ $0.driver }) { return driver }
        let device = self.device
        let driver = try ZoneDriver(
            local: KeychainZone(keychain: keychain, sealer: sealer, device: device), database: database(), server: server(device),
            sealer: sealer, device: device, configuration: Self.configuration, witness: witness(), logger: Self.logger)
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
            sealer: keyValueSealer, device: device, configuration: Self.configuration, witness: witness(), logger: Self.logger)
        process.withLock { $0.keyValueDriver = driver }
        return driver
    }

    /// Whether the keychain zone's sync state holds `item`: the running driver's, else the
    /// committed one; looking makes no driver (that would run a start-up before the run does).
    func stateHolds(_ item: ItemID) async throws -> Bool { try await record(of: item) != nil }

    /// The keychain zone's record of `item` in the running driver, else in the committed one;
    /// looking makes no driver (that would run a start-up before the run does).
    func record(of item: ItemID) async throws -> ZoneSyncState.Record? {
        if let driver = process.withLock({ $0.driver }) { return try await driver.records[item] }
        guard ClientStateDatabase.exists(forKeychain: keychainPath) else { return nil }
        return try database().loadZone(.keychain, device: device, sealer: sealer).0.records[item]
    }

    /// Loses everything in memory: the next ``driver(server:)`` starts from the files.
    func crash() { process.withLock { $0 = Process(device: $0.device, identity: $0.identity) } }

    /// Loses the sync state file as well and enrols again under a new device ID (the keychain
    /// keeps its items): the lost-state case of decision 0106.
    /// The new ID joins the log, then the earlier one, whose identity keys the keychain kept,
    /// signs its own revocation (`enroll`, decision 0241); returns both IDs.
    func loseStateAndEnrolAgain(generation: Int) throws -> (device: DeviceID, retired: DeviceID) {
        let earlier = process.withLock { ($0.device, $0.identity) }
        let device = try enrolAgain(generation: generation)
        try log.retire(earlier.0, identity: earlier.1)
        return (device, earlier.0)
    }

    /// Loses the sync state file and enrols again under a new ID, with the password: the device
    /// joins in the current epoch, whose key the password's wrap gives it, and reads the whole
    /// log. Returns the new ID.
    func enrolAgain(generation: Int) throws -> DeviceID {
        try ClientStateDatabase.removeFiles(forKeychain: keychainPath)
        let device = DeviceID("device-\(index)-\(generation)")!
        let identity = try log.join(device)
        logServed.value = nil
        for (epoch, key) in log.keys(inFirst: .max) where keys.accountKey(epoch: epoch) == nil { keys.learn(key, epoch: epoch) }
        process.withLock { $0 = Process(device: device, identity: identity) }
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

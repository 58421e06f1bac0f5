import Foundation
import KeychainCrypto
import KeychainModel
import KeychainStore
import Logging
import Synchronization
import SyncClient
import SyncCore
import SyncServer
import SyncTesting

/// One device of the run: a real keychain and a real sync state file in a directory of its own,
/// synced by the shipped ``ZoneDriver`` over a ``LoopbackZoneServer`` to the run's real server
/// storage. A crash throws the driver away and makes a new one from the files, as a restarted
/// process would.
final class ShippedDevice: Sendable {
    let index: Int
    let keychain: Keychain
    let keychainPath: String
    let sealer: VersionSealer
    /// The device's clock minus the run's, in milliseconds.
    let skew = Locked<Int64>(0)
    private let enrolment: Mutex<(device: DeviceID, driver: ZoneDriver<KeychainZone>?)>

    init(index: Int, directory: String, sealer: VersionSealer, clock: SimulatedClock) throws {
        self.index = index
        self.sealer = sealer
        keychainPath = directory + "/device-\(index)/keychain.db"
        var configuration = Keychain.Configuration()
        configuration.runtimeDirectory = directory + "/runtime-\(index)"
        let skew = self.skew
        configuration.now = { clock.date(skew: skew.value) }
        keychain = try Keychain.open(at: keychainPath, configuration: configuration)
        enrolment = Mutex((DeviceID("device-\(index)-0")!, nil))
    }

    var device: DeviceID { enrolment.withLock { $0.device } }

    /// The driver, made from the files when there is none (a start, or a restart after a crash).
    func driver(server: (DeviceID) -> LoopbackZoneServer) throws -> ZoneDriver<KeychainZone> {
        if let driver = enrolment.withLock({ $0.driver }) { return driver }
        let device = self.device
        let database = try ClientStateDatabase(keychainPath: keychainPath, create: true)
        let driver = try ZoneDriver(
            local: KeychainZone(keychain: keychain, sealer: sealer, device: device), database: database, server: server(device),
            sealer: sealer, device: device, configuration: ZoneSyncMachine.Configuration(pageSize: 7, maximumBatchSize: 5, maximumPushesPerRound: 4),
            logger: Logger(label: "simulation", factory: { _ in SwiftLogNoOpLogHandler() }))
        enrolment.withLock { $0.driver = driver }
        return driver
    }

    /// The driver, if one is running.
    var currentDriver: ZoneDriver<KeychainZone>? { enrolment.withLock { $0.driver } }

    /// Loses everything in memory: the next ``driver(server:)`` starts from the files.
    func crash() { enrolment.withLock { $0.driver = nil } }

    /// Loses the sync state file as well and enrols again under a new device ID (the keychain
    /// keeps its items): the lost-state case of decision 0106.
    func loseStateAndEnrolAgain(generation: Int) throws -> DeviceID {
        let path = ClientStateDatabase.path(forKeychain: keychainPath)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.removeItem(atPath: path + suffix)
        }
        let device = DeviceID("device-\(index)-\(generation)")!
        enrolment.withLock { $0 = (device, nil) }
        return device
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

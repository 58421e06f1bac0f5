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
import Testing

/// The shipped driver over the real SQLite storage, one device, with the loopback losing what a
/// test says: focused cases found by the shipped simulation (decision 0193).
@Suite("The shipped driver, one case at a time")
struct ShippedDriverTests {
    /// Seed 1850: the user replaced a value whose push's answer was lost by one too large to
    /// sync. The next round sets the new one aside and resends the batch of the old one; the
    /// server takes it, and the item's problem must stay: its local version is not synced.
    @Test func aResentBatchKeepsTheProblemOfANewerVersionSetAside() async throws {
        let device = try await OneDevice()
        defer { device.remove() }
        let query = Query(itemClass: .genericPassword, attributes: OneDevice.attributes, synchronizable: .yes)
        var attributes = OneDevice.attributes
        attributes.synchronizable = true
        _ = try device.keychain.add(Item(itemClass: .genericPassword, attributes: attributes, data: Array("v1".utf8)))
        device.losePushAnswers.value.withLock { $0 = true }
        await #expect(throws: (any Error).self) { try await device.driver.round() }
        device.losePushAnswers.value.withLock { $0 = false }
        try device.keychain.update(query, changes: ItemAttributes(), data: [UInt8](repeating: 35, count: VersionSealer.serverBlobLimit + 1))
        let report = try await device.driver.syncUntilInStep(maximumRounds: 4)
        #expect(report.pushed == 1)
        #expect(await device.driver.setAside.values.contains(.tooLarge))
        let problems = try device.database.problems(zone: .keychain)
        #expect(problems.count == 1 && problems.allSatisfy { $0.reason.hasPrefix("too large to sync") })
    }
}

/// One device with a real keychain and state file, synced by the shipped driver over a loopback
/// to a real SQLite server storage, in a directory of its own.
private final class OneDevice: Sendable {
    final class Flag: Sendable {
        let value = Mutex(false)
    }

    static let attributes: ItemAttributes = {
        var attributes = ItemAttributes()
        attributes.service = "driver"
        attributes.account = "item"
        return attributes
    }()

    let directory: String
    let keychain: Keychain
    let database: ClientStateDatabase
    let driver: ZoneDriver<KeychainZone>
    /// Whether the loopback loses the answers to pushes (after the storage took them).
    let losePushAnswers: Flag

    init() async throws {
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        directory = base + "/shipped-driver-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory + "/server", withIntermediateDirectories: true)
        let storage = try SQLiteStorage(directory: URL(fileURLWithPath: directory + "/server"))
        let account = NewAccount(name: "driver", credentials: AccountCredentials(
            verifier: [1], kdfParameters: Array(#"{"algorithm":"scrypt"}"#.utf8), salt: [UInt8](repeating: 1, count: 16),
            wrappedAccountKey: [2], wrappedRecoveryKey: [3]))
        try await storage.createAccount(account, now: Date())
        let device = DeviceID("device-0")!
        _ = try await storage.registerDevice(
            NewDevice(account: account.id, id: device, name: device.rawValue, tokenHash: Array(device.rawValue.utf8)), maximumDevices: 10, now: Date())
        let keys = AccountKeys(accountKey: try AccountKey(rawRepresentation: [UInt8](repeating: 7, count: 32)))
        let sealer = VersionSealer(keys: keys, account: "driver", zone: .keychain)
        let keychainPath = directory + "/device/keychain.db"
        var configuration = Keychain.Configuration()
        configuration.runtimeDirectory = directory + "/runtime"
        keychain = try Keychain.open(at: keychainPath, configuration: configuration)
        database = try ClientStateDatabase(keychainPath: keychainPath, create: true)
        let losePushAnswers = Flag()
        self.losePushAnswers = losePushAnswers
        let server = LoopbackZoneServer(storage: storage, account: account.id, device: device, zone: .keychain, fault: { call, stage in
            if call == .push, stage == .answer, losePushAnswers.value.withLock({ $0 }) { throw LoopbackZoneServer.Lost() }
        })
        driver = try ZoneDriver(
            local: KeychainZone(keychain: keychain, sealer: sealer, device: device), database: database, server: server, sealer: sealer,
            device: device, logger: Logger(label: "driver", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}

import Foundation
import KeychainModel
import KeychainStore
import KeyValueStore
import Logging
import Synchronization
import SyncClient
import SyncCore
import SyncServer

/// One device of a ``LoopbackAccount``: a real keychain and sync state file in a folder of the
/// account's directory, its keychain zone synced by the shipped ``ZoneDriver`` over a
/// ``LoopbackZoneServer`` to the account's storage; and key-value stores beside the keychain, each
/// its own zone, synced the same way. Losing the sync state and enrolling again keeps the keychain
/// and gives the device a new ID, as `sync-client enroll` does.
package final class LoopbackDevice: Sendable {
    /// The device under one enrolment: its ID, what the server does to its requests, and the
    /// state file and driver of its running process.
    private struct Enrolment {
        var id: DeviceID
        var tampering: LoopbackZoneServer.Tampering?
        var database: ClientStateDatabase
        var driver: ZoneDriver<KeychainZone>
        /// The drivers of the key-value stores synced so far, by store name.
        var stores: [String: ZoneDriver<KeyValueZone>] = [:]
    }

    package let name: String
    package let keychain: Keychain
    package let keychainPath: String
    /// The key-value stores beside the keychain.
    package let keyValues: KeyValueDatabase
    private let account: LoopbackAccount
    private let fault: LoopbackZoneServer.Fault
    private let enrolment: Mutex<Enrolment>

    init(
        name: String, account: LoopbackAccount,
        fault: @escaping LoopbackZoneServer.Fault
    ) async throws {
        self.name = name
        self.account = account
        self.fault = fault
        keychainPath = account.directory + "/\(name)/keychain.db"
        var configuration = Keychain.Configuration()
        configuration.runtimeDirectory = account.directory + "/\(name)-runtime"
        configuration.now = account.now
        keychain = try Keychain.open(at: keychainPath, configuration: configuration)
        keyValues = try KeyValueDatabase.open(besideKeychainAt: keychainPath, configuration: .init(now: account.now))
        let id = try await account.enrolNewID()
        enrolment = Mutex(try Self.enrolment(
            id, keychain: keychain, at: keychainPath, account: account, tampering: nil, fault: fault))
    }

    /// The device's ID under its current enrolment.
    package var id: DeviceID { enrolment.withLock { $0.id } }
    /// The keychain zone's driver under the current enrolment.
    package var driver: ZoneDriver<KeychainZone> { enrolment.withLock { $0.driver } }
    /// The sync state file under the current enrolment.
    package var database: ClientStateDatabase { enrolment.withLock { $0.database } }

    /// Syncs the keychain zone until it is in step (as `sync-client sync` does, without the
    /// device log, statements and key-value stores).
    @discardableResult
    package func sync(maximumRounds: Int = 8) async throws -> SyncRoundReport {
        try await driver.syncUntilInStep(maximumRounds: maximumRounds)
    }

    /// Syncs the key-value store `store` until it is in step (as `sync-client sync` does for each
    /// store, without the store directory).
    @discardableResult
    package func sync(store: String, maximumRounds: Int = 8) async throws -> SyncRoundReport {
        try await driver(ofStore: store).syncUntilInStep(maximumRounds: maximumRounds)
    }

    /// The driver of the key-value store `name` under the current enrolment, made on first use as
    /// the client makes it: the stores bound to the device first.
    package func driver(ofStore name: String) throws -> ZoneDriver<KeyValueZone> {
        let (id, made, database, tampering) = enrolment.withLock { ($0.id, $0.stores[name], $0.database, $0.tampering) }
        if let made { return made }
        _ = try keyValues.bind(toDevice: id)
        let store = try keyValues.store(named: name)
        let sealer = VersionSealer(keys: account.keys, account: LoopbackAccount.name, zone: store.zone)
        let driver = try ZoneDriver(
            local: KeyValueZone(store: store, keys: account.keys), database: database, server: Self.server(id, zone: store.zone, account: account, tampering: tampering, fault: fault),
            sealer: sealer, device: id, logger: Self.logger)
        enrolment.withLock { $0.stores[name] = driver }
        return driver
    }

    /// Sets `key` of the key-value store `store` to the string `value` (`keychain kv set`).
    package func setValue(_ value: String, forKey key: String, store: String) throws {
        try keyValues.store(named: store).set(value, forKey: key)
    }

    /// The string value of `key` in the key-value store `store`, or nil.
    package func value(forKey key: String, store: String) throws -> String? {
        try keyValues.store(named: store).string(forKey: key)
    }

    /// Removes `key` from the key-value store `store` (`keychain kv remove`).
    package func removeValue(forKey key: String, store: String) throws {
        _ = try keyValues.store(named: store).removeValue(forKey: key)
    }

    /// Every key of the key-value store `store` with its string value (`keychain kv list`).
    package func values(store: String) throws -> [String: String] {
        try keyValues.store(named: store).dictionaryRepresentation().mapValues { $0.stringValue ?? "\($0)" }
    }

    /// Adds a synchronizable generic password, or with `update` replaces the secret of the one
    /// there (`keychain add-generic-password --sync [-U]`).
    package func add(service: String, account: String, password: String, update: Bool = false) throws {
        let attributes = Self.attributes(service: service, account: account)
        if update, try self.password(service: service, account: account) != nil {
            try keychain.update(
                Query(itemClass: .genericPassword, attributes: attributes, synchronizable: .yes), changes: ItemAttributes(),
                data: Array(password.utf8))
        } else {
            var item = attributes
            item.synchronizable = true
            _ = try keychain.add(Item(itemClass: .genericPassword, attributes: item, data: Array(password.utf8)))
        }
    }

    /// Deletes the synchronizable generic password.
    package func delete(service: String, account: String) throws {
        try keychain.delete(Query(itemClass: .genericPassword, attributes: Self.attributes(service: service, account: account), synchronizable: .yes))
    }

    /// The synchronizable generic password's secret, or nil when there is none.
    package func password(service: String, account: String) throws(KeychainError) -> String? {
        let query = Query(
            itemClass: .genericPassword, attributes: Self.attributes(service: service, account: account), synchronizable: .yes, returns: .data)
        let found: [ItemResult]
        do {
            found = try keychain.find(query)
        } catch where error.code == .itemNotFound {
            return nil
        }
        return found.first?.data.map { String(decoding: $0, as: UTF8.self) }
    }

    /// The versions conflict resolution kept of the synchronizable generic password, with their secrets.
    package func history(service: String, account: String) throws -> [String] {
        var attributes = Self.attributes(service: service, account: account)
        attributes.synchronizable = true
        attributes.accessGroup = ItemRules.defaultAccessGroup
        return try keychain.historyVersions(of: PrimaryKey(itemClass: .genericPassword, attributes: attributes), includingData: true)
            .compactMap { $0.item.data.map { String(decoding: $0, as: UTF8.self) } }
    }

    /// The keychain zone's problems (what `sync-client status` lists), by the `service/account`
    /// of the item each names.
    package func problems() throws -> [String: String] {
        var names: [String: String] = [:]
        for (key, attributes) in try keychain.synchronizableItems() {
            names[account.sealer.itemID(of: key).rawValue] = "\(attributes.service ?? "")/\(attributes.account ?? "")"
        }
        return Dictionary(try database.problems(zone: .keychain).map { (names[$0.item] ?? $0.item, $0.reason) }, uniquingKeysWith: { $1 })
    }

    /// The device's process restarted (after a crash, say): a new driver from the files, under
    /// the same ID.
    /// - Parameter servedBy: What the server does to the device's requests from now on; nil:
    ///   what it did before.
    package func restart(servedBy newTampering: LoopbackZoneServer.Tampering? = nil) throws {
        let (id, tampering) = enrolment.withLock { ($0.id, newTampering ?? $0.tampering) }
        let restarted = try Self.enrolment(
            id, keychain: keychain, at: keychainPath, account: account, tampering: tampering, fault: fault)
        enrolment.withLock { $0 = restarted }
    }

    /// The device's sync state files removed, and the device enrolled again under a new ID: a
    /// driver from a new state file over the same keychain, which becomes the device's.
    /// - Parameters:
    ///   - tampering: What the server does to the device's requests from now on.
    ///   - copy: A copy of the server's storage the tampering serves, where the new ID is
    ///     registered too.
    @discardableResult
    package func loseStateAndEnrolAgain(
        tampering: LoopbackZoneServer.Tampering? = nil, registeringIn copy: SQLiteStorage? = nil
    ) async throws -> ZoneDriver<KeychainZone> {
        try ClientStateDatabase.removeFiles(forKeychain: keychainPath)
        let id = try await account.enrolNewID(alsoIn: copy)
        let again = try Self.enrolment(
            id, keychain: keychain, at: keychainPath, account: account, tampering: tampering, fault: fault)
        enrolment.withLock { $0 = again }
        return again.driver
    }

    private static func enrolment(
        _ id: DeviceID, keychain: Keychain, at keychainPath: String, account: LoopbackAccount, tampering: LoopbackZoneServer.Tampering?,
        fault: @escaping LoopbackZoneServer.Fault
    ) throws -> Enrolment {
        let database = try ClientStateDatabase(keychainPath: keychainPath, create: true)
        let driver = try ZoneDriver(
            local: KeychainZone(keychain: keychain, sealer: account.sealer, device: id), database: database,
            server: server(id, zone: .keychain, account: account, tampering: tampering, fault: fault), sealer: account.sealer, device: id,
            logger: logger)
        return Enrolment(id: id, tampering: tampering, database: database, driver: driver)
    }

    /// The loopback of `zone` for the device `id`, with the account's limits.
    private static func server(
        _ id: DeviceID, zone: ZoneID, account: LoopbackAccount, tampering: LoopbackZoneServer.Tampering?, fault: @escaping LoopbackZoneServer.Fault
    ) -> LoopbackZoneServer {
        LoopbackZoneServer(
            storage: account.storage, account: account.id, device: id, zone: zone, limits: account.limits.upload,
            maximumBlobBytes: account.limits.maximumBlobBytes, maximumRequestBytes: account.limits.maximumRequestBytes,
            deviceNow: account.now, fault: fault, tampering: tampering)
    }

    private static let logger = Logger(label: "loopback", factory: { _ in SwiftLogNoOpLogHandler() })

    private static func attributes(service: String, account: String) -> ItemAttributes {
        var attributes = ItemAttributes()
        attributes.service = service
        attributes.account = account
        return attributes
    }
}

import Foundation
import KeychainCrypto
import KeyValueStore
import Logging
import SyncCore

/// Syncs every key-value store of a device, each as its own opaque zone, plus the directory
/// zone `kv` that tells devices which stores exist (decision 0070). The stores are the
/// ``KeyValueDatabase`` beside the keychain; the zones' states are in the client's state file.
package actor KeyValueSync {
    /// What a pass over every store did.
    package struct Report: Sendable, Equatable {
        package var pushed = 0
        package var applied = 0
        /// The stores synced.
        package var stores: [String] = []
        /// Entries a full resync no longer listed, kept and reported (decision 0106).
        package var unlisted = 0
    }

    /// The key-value database file beside the keychain (it may not exist yet).
    package let databasePath: String
    /// The database, once it exists: a device that never used a store and whose account has
    /// none gets no file.
    private var database: KeyValueDatabase?
    private let session: ClientSession
    private let keys: AccountKeys
    private var directory: ZoneDriver<StoreDirectory>
    private var drivers: [String: ZoneDriver<KeyValueZone>] = [:]
    /// The newest journal sequence when the last pass began: a pass takes everything up to it.
    private var journalSeen: Int64 = 0

    /// Prepares the sync of the key-value stores beside the session's keychain; opens their
    /// database (binding its writes to the enrolled device) when it exists.
    package init(session: ClientSession) throws(SyncClientError) {
        self.session = session
        keys = session.keys
        databasePath = KeyValueDatabase.path(besideKeychainAt: session.keychain.path)
        let existing = FileManager.default.fileExists(atPath: databasePath) ? try Self.open(session: session) : nil
        database = existing
        directory = try Self.directoryDriver(session: session, keys: keys, database: existing)
    }

    /// Opens (or creates) the database beside the session's keychain and binds it to the enrolled
    /// account and device.
    package static func open(session: ClientSession) throws(SyncClientError) -> KeyValueDatabase {
        do {
            let database = try OpenFiles.keyValueDatabases.value(at: KeyValueDatabase.path(besideKeychainAt: session.keychain.path), opening: { try KeyValueDatabase(path: $0) })
            try bind(database, keys: session.keys, device: session.enrolment.device, state: session.database, logger: session.logger)
            return database
        } catch {
            throw SyncClientError.mapped(error)
        }
    }

    /// Binds the key-value database beside a keychain just enrolled (when there is one) to its
    /// account and device, so another account's stores are reset now and a value written before
    /// the first sync is the new account's. Every pass binds again, so a failure here only logs.
    package static func bindAfterEnrolment(
        keychainPath: String, accountKey: AccountKey, device: DeviceID, state: ClientStateDatabase, logger: Logger
    ) {
        let path = KeyValueDatabase.path(besideKeychainAt: keychainPath)
        guard FileManager.default.fileExists(atPath: path) else { return }
        do {
            try bind(KeyValueDatabase(path: path), keys: AccountKeys(accountKey: accountKey), device: device, state: state, logger: logger)
        } catch {
            logger.warning("cannot bind the key-value stores to the new account yet", metadata: ["error": "\(error)"])
        }
    }

    /// Binds `database` to the account of `keys` (a database that holds another account's values
    /// is reset, decision 0071) and to `device` (decision 0070).
    private static func bind(
        _ database: KeyValueDatabase, keys: AccountKeys, device: DeviceID, state: ClientStateDatabase, logger: Logger
    ) throws {
        let account = StoreDirectory(database: nil, keys: keys).accountBinding
        if let previous = try database.boundAccount(), previous != account {
            // The old account's zone states go before the stores are reset: after a crash in
            // between, the database is still bound to the old account and both happen again.
            try forgetKeyValueZones(in: state)
        }
        if case .changed(let stores) = try database.bind(toAccount: account) {
            logger.notice("key-value stores reset for another account", metadata: ["stores": "\(stores.count)"])
        }
        try database.bind(toDevice: device)
    }

    private static func directoryDriver(
        session: ClientSession, keys: AccountKeys, database: KeyValueDatabase?
    ) throws(SyncClientError) -> ZoneDriver<StoreDirectory> {
        try ZoneDriver(
            local: StoreDirectory(database: database, keys: keys), database: session.database,
            server: ZoneTransport(connection: session.connection, zone: StoreDirectory.zone),
            sealer: VersionSealer(keys: keys, account: session.enrolment.account, zone: StoreDirectory.zone),
            device: session.enrolment.device, witness: try session.witness(), logger: session.logger)
    }

    /// The database, opened (and created) now if need be.
    private func openDatabase() throws(SyncClientError) -> KeyValueDatabase {
        if let database { return database }
        let opened = try Self.open(session: session)
        database = opened
        directory = try Self.directoryDriver(session: session, keys: keys, database: opened)
        return opened
    }

    /// Syncs the directory, then every store (local ones and those the directory names) until
    /// each is in step. A store that fails does not stop the others; the first failure is thrown
    /// at the end.
    @discardableResult
    package func syncUntilInStep(maximumRounds: Int = 100) async throws -> Report {
        if database == nil, FileManager.default.fileExists(atPath: databasePath) { _ = try openDatabase() }
        journalSeen = try SyncClientError.mapping { try database?.latestJournalSequence() ?? 0 }
        var report = Report()
        var syncable = Set(try SyncClientError.mapping { try database?.storeNames() ?? [] })
        // Always: the directory is how this device learns of stores written elsewhere.
        let listing = try await directory.syncUntilInStep(maximumRounds: maximumRounds)
        report.pushed += listing.pushed
        report.unlisted += listing.unlisted
        syncable.formUnion(StoreDirectory.names(in: try await directory.records))
        if syncable.isEmpty { return report }
        var failure: (any Error)?
        for name in syncable.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            do {
                let result = try await driver(for: name).syncUntilInStep(maximumRounds: maximumRounds)
                report.pushed += result.pushed
                report.applied += result.applied
                report.unlisted += result.unlisted
                report.stores.append(name)
            } catch {
                session.logger.warning("key-value store sync failed", metadata: ["store": "\(name)", "error": "\(error)"])
                if failure == nil { failure = error }
            }
        }
        if let failure { throw failure }
        return report
    }

    /// Whether a store was written since the last pass began (a one-row query): the daemon's
    /// check before it starts a pass for a change of the database file.
    package func hasNewLocalChanges() -> Bool {
        guard let database else { return FileManager.default.fileExists(atPath: databasePath) }
        return ((try? database.latestJournalSequence()) ?? .max) > journalSeen
    }

    /// How far `zone` (the directory or a store's zone) has pulled; nil for a zone of a store
    /// this device has not synced yet.
    package func cursor(of zone: ZoneID) async -> UInt64? {
        if zone == directory.zone { return await directory.cursor }
        guard let driver = drivers.values.first(where: { $0.zone == zone }) else { return nil }
        return await driver.cursor
    }

    private func driver(for name: String) throws -> ZoneDriver<KeyValueZone> {
        if let driver = drivers[name] { return driver }
        let store = try openDatabase().store(named: name)
        let zone = StoreDirectory(database: database, keys: keys).zone(ofStore: name)
        let driver = try ZoneDriver(
            local: KeyValueZone(store: store, keys: keys), database: session.database,
            server: ZoneTransport(connection: session.connection, zone: zone),
            sealer: VersionSealer(keys: keys, account: session.enrolment.account, zone: zone),
            device: session.enrolment.device, witness: try session.witness(), logger: session.logger)
        drivers[name] = driver
        return driver
    }

    /// Drops the client's state of the directory zone and of every store zone: sealed under the
    /// previous account's key, and about that account's zones.
    private static func forgetKeyValueZones(in state: ClientStateDatabase) throws(SyncClientError) {
        try state.write { db in
            for table in ["zone_state", "item_record", "problem"] {
                try db.execute(
                    sql: "DELETE FROM \(table) WHERE zone = ? OR substr(zone, 1, 3) = 'kv.'", arguments: [StoreDirectory.zone.rawValue])
            }
        }
    }
}

import Crypto
import Foundation
import GRDB
import GRDBSQLite
import KeychainModel
import Logging
import Synchronization

/// A local keychain: Apple keychain semantics over one SQLite database, secrets sealed at rest.
///
/// Open one with ``open(at:configuration:)``; every method is synchronous, thread-safe and runs in
/// its own transaction. Several processes may use the same keychain at once: the lock state lives
/// in the database, so `lock()` in one process takes effect in every other.
public final class Keychain: Sendable {
    /// Settings of an open keychain.
    public struct Configuration: Sendable {
        /// The access group of items added without one.
        public var defaultAccessGroup: String
        /// The clock that dates items.
        public var now: @Sendable () -> Date
        /// Where the keychain logs (never item contents or secrets).
        public var logger: Logger
        var passcodeParameters: PasscodeKey.Parameters

        /// The defaults: access group "default", the system clock, a quiet logger.
        public init(
            defaultAccessGroup: String = ItemRules.defaultAccessGroup, now: @escaping @Sendable () -> Date = { Date() },
            logger: Logger = Logger(label: "synckeychain.store", factory: { _ in SwiftLogNoOpLogHandler() })
        ) {
            self.defaultAccessGroup = defaultAccessGroup
            self.now = now
            self.logger = logger
            self.passcodeParameters = .default
        }

        /// Lowers the passcode KDF cost; for tests only, never for real keychains.
        package mutating func useInsecureFastPasscodeDerivationForTesting() {
            passcodeParameters = PasscodeKey.Parameters(rounds: 1 << 10, blockSize: 8, parallelism: 1)
        }
    }

    let database: DatabaseQueue
    let files: KeychainFiles
    let deviceKey: SymmetricKey
    let configuration: Configuration
    let state: Mutex<KeyState>

    /// The path of the database file.
    public var path: String { files.databasePath }

    /// Opens the keychain at `path`, creating it (and its directory, 0700) when there is none.
    ///
    /// - Parameters:
    ///   - path: The database file; the device key file is created beside it.
    ///   - configuration: Settings; the defaults suit most uses.
    /// - Throws: ``KeychainStatus/notAvailable`` with a clear message when the file is corrupt,
    ///   from a newer version, not a keychain, or its device key is missing; such a file is left
    ///   untouched.
    public static func open(at path: String, configuration: Configuration = Configuration()) throws(KeychainError) -> Keychain {
        let files = KeychainFiles(databasePath: path)
        let deviceKey: SymmetricKey
        if files.isNew() {
            deviceKey = try files.create()
        } else {
            try files.validateExisting()
            deviceKey = try files.readDeviceKey()
        }
        return try Keychain(files: files, deviceKey: deviceKey, configuration: configuration)
    }

    private init(files: KeychainFiles, deviceKey: SymmetricKey, configuration: Configuration) throws(KeychainError) {
        self.files = files
        self.deviceKey = deviceKey
        self.configuration = configuration
        var databaseConfiguration = GRDB.Configuration()
        databaseConfiguration.journalMode = .wal
        databaseConfiguration.busyMode = .timeout(10)
        databaseConfiguration.label = "keychain"
        databaseConfiguration.prepareDatabase { db in
            // Freed pages are zeroed, and SQLite keeps no temporary files on disk.
            try db.execute(sql: "PRAGMA secure_delete = ON; PRAGMA temp_store = MEMORY")
            // Keep the WAL file when the last connection closes. Otherwise every short-lived
            // process (each `keychain find`) deletes it on close and recreates it on open with a
            // write transaction (GRDB makes sure a non-empty WAL exists): four fdatasyncs for a
            // read. `lock()` still truncates the WAL explicitly.
            var persistWAL: Int32 = 1
            _ = sqlite3_file_control(db.sqliteConnection, "main", SQLITE_FCNTL_PERSIST_WAL, &persistWAL)
        }
        do {
            database = try DatabaseQueue(path: files.databasePath, configuration: databaseConfiguration)
            try Self.makeCommitsDurable(database)
            let migrator = Schema.migrator
            state = Mutex(.empty)
            try database.read { db in try Self.checkIdentity(db, migrator: migrator) }
            let wasMigrated = try database.read(migrator.hasCompletedMigrations)
            // Opening an existing, complete keychain only reads: a `keychain find` takes no write
            // lock from a running daemon. (Both writes re-check inside their transaction, for
            // two processes opening a new keychain at once.)
            if !wasMigrated { try migrator.migrate(database) }
            if try !database.read(KeyState.hasClassKeys) {
                try database.write { db in try KeyState.createClassKeys(db, deviceKey: deviceKey) }
            }
            if !wasMigrated {
                // Write the new header (application ID, schema version) into the main file now.
                try database.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
            }
        } catch {
            throw Self.mapped(error)
        }
        configuration.logger.debug("keychain opened")
    }

    /// Makes every commit reach the disk before it returns: an item a caller was told is saved
    /// survives a power loss, and the sync engine's state never runs ahead of the keychain it
    /// describes. GRDB sets `synchronous = NORMAL` on WAL databases after `prepareDatabase`, which
    /// loses the last commits on power loss, so this runs after opening.
    private static func makeCommitsDurable(_ database: DatabaseQueue) throws {
        try database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
    }

    /// SQLite's `synchronous` setting of the keychain's connection (2 is FULL), for tests.
    package func synchronousSetting() throws(KeychainError) -> Int {
        do {
            return try database.read { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1 }
        } catch {
            throw Self.mapped(error)
        }
    }

    /// Refuses, before any write, a database that belongs to another application or to a newer
    /// version of this one (the header check may have seen a header not yet checkpointed).
    private static func checkIdentity(_ db: Database, migrator: DatabaseMigrator) throws {
        let applicationID = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
        let userVersion = try Int32.fetchOne(db, sql: "PRAGMA user_version") ?? 0
        let tableCount = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master") ?? 0
        if applicationID != Schema.applicationID && tableCount > 0 {
            throw KeychainError(.notAvailable, "the file is not a keychain (a database of another application)")
        }
        let superseded = try migrator.hasBeenSuperseded(db)
        if userVersion > Schema.version || superseded {
            throw KeychainError(.notAvailable, "the keychain was created by a newer version")
        }
    }

    /// Runs `body` in an immediate write transaction with the current key state.
    func write<T>(_ body: (Database, KeyState) throws -> T) throws(KeychainError) -> T {
        do {
            return try database.writeWithoutTransaction { db in
                var result: T?
                try db.inTransaction(.immediate) {
                    result = try body(db, try currentState(db))
                    return .commit
                }
                return result!
            }
        } catch {
            throw Self.mapped(error)
        }
    }

    /// Runs `body` in a read transaction with the current key state.
    func read<T>(_ body: (Database, KeyState) throws -> T) throws(KeychainError) -> T {
        try readWithoutState { db in try body(db, try currentState(db)) }
    }

    /// Runs `body` in a read transaction; `body` gets the key state itself.
    func readWithoutState<T>(_ body: (Database) throws -> T) throws(KeychainError) -> T {
        do {
            return try database.read(body)
        } catch {
            throw Self.mapped(error)
        }
    }

    /// Runs `body`, which must read with one single SELECT statement, without an explicit
    /// transaction: one statement is atomic by itself in SQLite, and GRDB's read-only transaction
    /// set-up costs as much as the lookup. Used by the lookup path only.
    func readOneStatement<T>(_ body: (Database) throws -> T) throws(KeychainError) -> T {
        do {
            return try database.unsafeRead(body)
        } catch {
            throw Self.mapped(error)
        }
    }

    /// The key state, reloaded only when the stored generation moved.
    /// - Parameter knownGeneration: The generation if already read in this transaction.
    func currentState(_ db: Database, knownGeneration: Int64? = nil) throws -> KeyState {
        let generation = try knownGeneration
            ?? Int64.fetchOne(db.cachedStatement(sql: "SELECT generation FROM keychain_state WHERE id = 1"))
        let cached = state.withLock { $0 }
        if cached.generation == generation { return cached }
        let loaded = try KeyState.load(db, deviceKey: deviceKey)
        state.withLock { $0 = loaded }
        return loaded
    }

    var now: Date { configuration.now() }

    static func mapped(_ error: any Error) -> KeychainError {
        if let error = error as? KeychainError { return error }
        if let error = error as? DatabaseError {
            switch error.resultCode {
            case .SQLITE_CORRUPT, .SQLITE_NOTADB:
                return KeychainError(.notAvailable, "the keychain file is corrupt", underlying: error)
            case .SQLITE_BUSY, .SQLITE_LOCKED:
                return KeychainError(.notAvailable, "the keychain is busy", underlying: error)
            case .SQLITE_CONSTRAINT:
                return KeychainError(.duplicateItem, underlying: error)
            case .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_READONLY:
                return KeychainError(.notAvailable, "the keychain file cannot be opened for writing", underlying: error)
            default:
                return KeychainError(.notAvailable, "keychain database error (\(error.resultCode.rawValue))", underlying: error)
            }
        }
        return KeychainError(.notAvailable, "keychain error", underlying: nil)
    }
}

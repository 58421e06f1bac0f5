import Crypto
import DurableSQLite
import Foundation
import GRDB
import GRDBSQLite
import KeychainModel
import KeychainSQLiteConfig
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
        /// Where the session keys live (decision 0136); nil: `$XDG_RUNTIME_DIR`, else `/dev/shm`.
        package var runtimeDirectory: String?
        /// Whether this process keeps the keychain open while it writes many times (a daemon, an
        /// app): its checkpoints then restart the WAL, and later commits overwrite the file in
        /// place rather than grow it again (decision 0246). A process that opens the keychain for
        /// one or a few writes and exits must leave it false: SQLite forgets a restart when the
        /// last connection closes, and the WAL would grow with every such process.
        public var keepsKeychainOpen: Bool
        /// Whether this is a shared group's keychain (decision 0295): every item in it is
        /// synchronizable, so an add makes it so, a change may not make it local, and a search
        /// matches every item whatever its synchronizable filter says.
        public var everyItemSynchronizable = false
        /// Why this keychain takes no change from its user, when it takes none: a shared group the
        /// account only reads (decision 0299). Adds, updates, deletions, imports and restores are
        /// refused with ``KeychainStatus/readOnly`` and this message; what the sync applies is not.
        public var refusesChanges: String?
        /// The key that seals the class keys in place of a device key file beside the database,
        /// and the keychain whose lock this one's follows: set by
        /// ``Keychain/openSubordinate(at:name:configuration:)`` only.
        var subordinateKey: SymmetricKey?
        var lockedWith: Keychain?

        /// The defaults: access group "default", the system clock, a quiet logger, a process that
        /// does not keep the keychain open.
        public init(
            defaultAccessGroup: String = ItemRules.defaultAccessGroup, now: @escaping @Sendable () -> Date = { Date() },
            logger: Logger = Logger(label: "synckeychain.store", factory: { _ in SwiftLogNoOpLogHandler() }),
            keepsKeychainOpen: Bool = false
        ) {
            self.defaultAccessGroup = defaultAccessGroup
            self.now = now
            self.logger = logger
            self.keepsKeychainOpen = keepsKeychainOpen
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
    let session: SessionKeys
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
    ///   untouched. Also when the path, or a file beside it that belongs to the keychain, is there
    ///   but is not a regular file (a FIFO, a device such as `/dev/null`, a directory): then
    ///   nothing is opened for writing and no file's mode changes.
    public static func open(at path: String, configuration: Configuration = Configuration()) throws(KeychainError) -> Keychain {
        try open(KeychainFiles(databasePath: path), creating: true, configuration: configuration)
    }

    /// Opens the keychain at `path` only when there is one: for a reader, which would otherwise
    /// create a keychain (and its directories) at a mistyped path and then find nothing in it.
    ///
    /// - Throws: ``KeychainStatus/notAvailable`` naming the path when no file is there, creating
    ///   nothing; otherwise as ``open(at:configuration:)``.
    public static func openExisting(at path: String, configuration: Configuration = Configuration()) throws(KeychainError) -> Keychain {
        try open(KeychainFiles(databasePath: path), creating: false, configuration: configuration)
    }

    private static func open(_ files: KeychainFiles, creating: Bool, configuration: Configuration) throws(KeychainError) -> Keychain {
        // One process at a time opens a keychain of this directory: two that open a new one at
        // once (`sync-client` joining a group while the Secret Service opens the group's
        // keychain) would otherwise read each other's half-made file as damaged or create its
        // tables twice; the second now finds it complete. An open that creates nothing holds the
        // lock for the reads of its header and identity.
        try files.whileOpening { () throws(KeychainError) in try openLocked(files, creating: creating, configuration: configuration) }
    }

    private static func openLocked(_ files: KeychainFiles, creating: Bool, configuration: Configuration) throws(KeychainError) -> Keychain {
        let deviceKey: SymmetricKey
        switch try files.state() {
        case .missing where !creating:
            throw KeychainError(.notAvailable, "there is no keychain at \(files.databasePath)")
        case .missing, .empty:
            if let key = configuration.subordinateKey {
                try files.createDatabase()
                deviceKey = key
            } else {
                deviceKey = try files.create()
            }
        case .existing:
            try files.validateExisting()
            if let key = configuration.subordinateKey {
                deviceKey = key
            } else {
                deviceKey = try files.readDeviceKey()
            }
        }
        return try Keychain(files: files, deviceKey: deviceKey, configuration: configuration)
    }

    private init(files: KeychainFiles, deviceKey: SymmetricKey, configuration: Configuration) throws(KeychainError) {
        self.files = files
        self.deviceKey = deviceKey
        self.session = SessionKeys(databasePath: files.databasePath, runtimeDirectory: configuration.runtimeDirectory)
        self.configuration = configuration
        var databaseConfiguration = GRDB.Configuration()
        // No `journalMode = .wal`: GRDB's WAL set-up writes a transaction whenever the WAL file is
        // empty, and runs on every open. A keychain is put in WAL mode once, when it is created
        // (below), and SQLite keeps that mode in the file.
        let busyTimeout: TimeInterval = 10
        databaseConfiguration.busyMode = .timeout(busyTimeout)
        // The schema has no foreign keys: one PRAGMA less on every open.
        databaseConfiguration.foreignKeysEnabled = false
        databaseConfiguration.label = "keychain"
        databaseConfiguration.prepareDatabase { db in
            // Keep the WAL file (empty) when the last connection closes, rather than deleting it
            // and creating it again in the next process. Set first, so that a damaged file whose
            // pragmas fail below still leaves its companion files as they were.
            var persistWAL: Int32 = 1
            _ = sqlite3_file_control(db.sqliteConnection, "main", SQLITE_FCNTL_PERSIST_WAL, &persistWAL)
            // No checkpoint when a connection closes: a one-shot `keychain` process would pay
            // two more fsyncs for it after its durable commit (and a read-only one would write
            // pages). A commit that leaves 64 frames or more in the WAL checkpoints and truncates
            // it instead (restarts it, in a process that keeps the keychain open), which also
            // bounds what a new process reads to rebuild the WAL index (decisions 0160, 0246).
            _ = keychain_sqlite_skip_checkpoint_on_close(db.sqliteConnection)
            _ = keychain_sqlite_checkpoint_wal_after(
                db.sqliteConnection, Self.walFramesBeforeCheckpoint, Int32(busyTimeout * 1000), configuration.keepsKeychainOpen ? 1 : 0)
            // Freed pages are zeroed, and SQLite keeps no temporary files on disk. Every commit
            // reaches the disk before it returns (decision 0013). A WAL that could only be
            // checkpointed passively (readers in the way) is cut back to 1 MiB when it restarts.
            // Run by SQLite directly: nothing GRDB tracks, and its statement set-up for each
            // would cost more than the pragmas on every keychain process.
            let pragmas = """
                PRAGMA secure_delete = ON; PRAGMA temp_store = MEMORY; PRAGMA synchronous = FULL;
                PRAGMA journal_size_limit = 1048576
                """
            let result = sqlite3_exec(db.sqliteConnection, pragmas, nil, nil, nil)
            guard result == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: result)) }
        }
        // The system's VFS with one sync less per writing process: the WAL's directory is
        // synced when the WAL is created, not again by each process (docs/decisions/0160). If
        // it cannot be registered, SQLite's own VFS does the same work with that extra sync.
        _ = keychain_sqlite_register_vfs()
        do {
            database = try DatabaseQueue(path: files.databasePath, configuration: databaseConfiguration)
            state = Mutex(.empty)
            // A complete keychain is recognised by its header values and class keys, read with
            // plain statements: no migrator and no write on the path of every `keychain find`.
            let identity = try database.unsafeRead(Identity.init)
            try identity.check()
            if !identity.isComplete {
                try Self.createOrMigrate(database, deviceKey: deviceKey)
            }
        } catch {
            throw Self.mapped(error)
        }
        configuration.logger.debug("keychain opened")
    }

    /// The WAL length (frames, one page each) at which a commit checkpoints and truncates it.
    package static let walFramesBeforeCheckpoint: Int32 = 64

    /// A number that changes whenever another process commits to the keychain (SQLite's
    /// `data_version` on this keychain's connection): a cheap check that what was read is current.
    public func externalChangeCounter() throws(KeychainError) -> Int64 {
        try readWithoutState { db in try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? 0 }
    }

    /// SQLite's `synchronous` setting of the keychain's connection (2 is FULL), for tests.
    package func synchronousSetting() throws(KeychainError) -> Int {
        do {
            return try database.read { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1 }
        } catch {
            throw Self.mapped(error)
        }
    }

    /// Creates a new keychain's schema and class keys, or finishes one that another process (or
    /// a crash) left half made, or migrates an older one. Refuses, before any write, a database
    /// that belongs to another application or to a newer version of this one.
    private static func createOrMigrate(_ database: DatabaseQueue, deviceKey: SymmetricKey) throws {
        let migrator = Schema.migrator(deviceKey: deviceKey)
        if try database.read(migrator.hasBeenSuperseded) {
            throw KeychainError(.notAvailable, "the keychain was created by a newer version")
        }
        let wasMigrated = try database.read(migrator.hasCompletedMigrations)
        if !wasMigrated {
            try database.writeWithoutTransaction { db in
                guard try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL") == "wal" else {
                    throw KeychainError(.notAvailable, "the keychain file cannot be put in WAL mode")
                }
            }
            try migrator.migrate(database)
        }
        // Both writes re-check inside their transaction, for two processes opening a new keychain at once.
        if try !database.read(KeyState.hasClassKeys) {
            try database.write { db in try KeyState.createClassKeys(db, deviceKey: deviceKey) }
        }
        if !wasMigrated {
            // Write the new header (application ID, schema version) into the main file now.
            try database.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
        }
    }

    /// Runs `body` in an immediate write transaction with the current key state, then, once it
    /// committed, posts the change notice: every write of the keychain, whatever its path (an
    /// item, an import, a history restore, a sync's apply, the lock), runs here (decision 0268).
    func write<T>(_ body: (Database, KeyState) throws -> T) throws(KeychainError) -> T {
        let result: T
        do {
            result = try database.writeWithoutTransaction { db in
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
        files.changeNotice.post()
        return result
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
        var generation = knownGeneration
        if generation == nil {
            // Read column by column (``RawColumns``): every write begins here.
            let columns = RawColumns(statement: try db.cachedStatement(sql: "SELECT generation FROM keychain_state WHERE id = 1").sqliteStatement)
            columns.bind([])
            defer { columns.finish() }
            if try columns.step(db) { generation = columns.int64(0) }
        }
        var current = state.withLock { $0 }
        if current.generation != generation {
            current = try KeyState.load(db, deviceKey: deviceKey, session: session)
            state.withLock { [current] in $0 = current }
        }
        // A subordinate keychain is locked while the keychain it belongs to is (decision 0298).
        if let parent = configuration.lockedWith, !current.locked, try parent.lockStatus().isLocked { current.locked = true }
        return current
    }

    /// The metadata keys (decision 0280): the ones the key state holds, loaded once per process
    /// (they derive from the "always" class key, which no lock or passcode change replaces).
    func metadataKeys(_ db: Database) throws -> MetadataKeys {
        if let keys = state.withLock({ $0.metadataKeys }) { return keys }
        return try currentState(db).metadata
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

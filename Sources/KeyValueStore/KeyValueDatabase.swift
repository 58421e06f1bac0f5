import DurableSQLite
import Foundation
import GRDB
import SyncCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The database of every key-value store of a device: one SQLite file (0600, WAL) beside the
/// keychain, rows keyed by (store, key). Open it once per process and take stores from it with
/// ``store(named:)``; stores of the same name share their change events and sync engine.
///
/// Values are not encrypted at rest (they are preferences, as in Apple's store; secrets belong in
/// the keychain). They are encrypted end to end when they sync.
public final class KeyValueDatabase: Sendable {
    /// Settings of an open database.
    public struct Configuration: Sendable {
        /// The clock that dates changes.
        public var now: @Sendable () -> Date
        /// The device that writes; `nil` uses the one stored in the database (random on creation).
        public var device: DeviceID?

        /// The defaults: the system clock and the stored device ID.
        public init(now: @escaping @Sendable () -> Date = { Date() }, device: DeviceID? = nil) {
            self.now = now
            self.device = device
        }
    }

    let queue: DatabaseQueue
    let configuration: Configuration
    let broadcaster = ChangeBroadcaster()
    let engines = Mutex<[String: any KeyValueSyncEngine]>([:])
    let boundDevice: Mutex<DeviceID>
    /// The device whose writes this database records: the configured one, else the stored one
    /// (see ``bind(toDevice:)``).
    public var device: DeviceID { configuration.device ?? boundDevice.withLock { $0 } }
    /// The database file.
    public let path: String

    /// The database file of the key-value stores that go with the keychain at `keychainPath`: the
    /// keychain's file name without its extension, plus `suffix`, in the same directory
    /// (`keychain.db` → `keychain.kv.sqlite`; a shared group's stores take a suffix of their own).
    public static func path(besideKeychainAt keychainPath: String, suffix: String = ".kv.sqlite") -> String {
        let url = URL(fileURLWithPath: keychainPath)
        let base = url.deletingPathExtension().lastPathComponent
        return url.deletingLastPathComponent().appendingPathComponent(base + suffix).path
    }

    /// Opens the database beside the keychain at `keychainPath` (see ``path(besideKeychainAt:)``).
    public static func open(besideKeychainAt keychainPath: String, configuration: Configuration = Configuration()) throws(KeyValueStoreError) -> KeyValueDatabase {
        try KeyValueDatabase(path: path(besideKeychainAt: keychainPath), configuration: configuration)
    }

    /// Opens the database at `path`, creating it (0600, and its directory 0700) when there is none.
    /// - Throws: ``KeyValueStoreError/Code/storage`` when the file cannot be created or opened,
    ///   is a database of another application, or it, its lock file or a file SQLite keeps beside
    ///   it is there and is not a regular file (then nothing was opened for writing).
    public init(path: String, configuration: Configuration = Configuration()) throws(KeyValueStoreError) {
        self.path = path
        self.configuration = configuration
        do {
            try DurableSQLite.createPrivateFile(atPath: path)
        } catch let error as NotARegularFile {
            throw KeyValueStoreError(.storage, error.description, underlying: error)
        } catch {
            throw KeyValueStoreError(.storage, "cannot create the key-value database", underlying: error)
        }
        // Two processes opening a new file at once (the sync daemon and `keychain kv`) must not
        // migrate it together: GRDB creates its migrations table before the first migration's
        // transaction, so the other would see a table without the application ID, or apply v1
        // twice. The setup runs under an exclusive lock on `<path>.lock`.
        let setupLock = try Self.lockForSetup(path)
        defer { releaseSetupLock(setupLock) }
        do {
            // A value the caller was told is set survives a power loss; a removed one is zeroed.
            queue = try DurableSQLite.queue(path: path, label: "key-value", zeroFreedPages: true)
            try queue.read { db in
                let applicationID = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
                let tables = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master") ?? 0
                if applicationID != KeyValueSchema.applicationID && tables > 0 {
                    throw KeyValueStoreError(.storage, "the file is not a key-value database")
                }
            }
            try KeyValueSchema.migrator.migrate(queue)
            boundDevice = Mutex(try queue.write { db in
                if let stored = try Self.storedDevice(db) { return stored }
                let device = configuration.device ?? DeviceID.random()
                try db.execute(sql: "INSERT INTO kv_device (id, device) VALUES (1, ?)", arguments: [device.rawValue])
                return device
            })
        } catch {
            throw Self.mapped(error)
        }
    }

    /// The store called `name` (an app's identifier).
    /// - Throws: ``KeyValueStoreError/Code/invalidStoreName`` for an empty name, one longer than
    ///   ``KeyValueLimits/maximumStoreNameBytes``, or one with control characters.
    public func store(named name: String) throws(KeyValueStoreError) -> KeyValueStore {
        try KeyValueLimits.validate(storeName: name)
        return KeyValueStore(name: name, database: self)
    }

    /// The names of the stores that hold any value or version, in ascending byte order.
    public func storeNames() throws(KeyValueStoreError) -> [String] {
        try read { db in try String.fetchAll(db, sql: "SELECT DISTINCT store FROM kv_version ORDER BY store") }
    }

    /// Runs `body` in an immediate write transaction, then, once it committed, posts the change
    /// notice that wakes the sync daemon (decision 0268).
    func write<T>(_ body: (Database) throws -> T) throws(KeyValueStoreError) -> T {
        let result: T
        do {
            result = try queue.writeWithoutTransaction { db in
                var result: T?
                try db.inTransaction(.immediate) {
                    result = try body(db)
                    return .commit
                }
                return result!
            }
        } catch {
            throw Self.mapped(error)
        }
        ChangeNotice(databasePath: path).post()
        return result
    }

    func read<T>(_ body: (Database) throws -> T) throws(KeyValueStoreError) -> T {
        do {
            return try queue.read(body)
        } catch {
            throw Self.mapped(error)
        }
    }

    static func mapped(_ error: any Error) -> KeyValueStoreError {
        if let error = error as? KeyValueStoreError { return error }
        if let error = error as? NotARegularFile { return KeyValueStoreError(.storage, error.description, underlying: error) }
        // GRDB's description may hold SQL arguments: keep only the result code in the message.
        if let error = error as? DatabaseError {
            return KeyValueStoreError(.storage, "the key-value database failed (SQLite \(error.resultCode.primaryResultCode.rawValue))", underlying: error)
        }
        return KeyValueStoreError(.storage, "the key-value database failed", underlying: error)
    }

    /// Creates the directory (0700) and the empty file (0600) unless they exist; makes an
    /// existing file 0600.
}

extension KeyValueDatabase {
    /// Opens `<path>.lock` (0600) and takes an exclusive `flock` on it, waiting for another
    /// process's setup to finish (a migration: short).
    fileprivate static func lockForSetup(_ path: String) throws(KeyValueStoreError) -> Int32 {
        let lockPath = path + ".lock"
        if let refusal = FileKind(atPath: lockPath).refusal("the key-value database's lock file", lockPath) {
            throw KeyValueStoreError(.storage, refusal)
        }
        let descriptor = openPrivateFile(lockPath)
        guard descriptor >= 0 else { throw KeyValueStoreError(.storage, "cannot open the key-value database's lock file (errno \(errno))") }
        if let refusal = FileKind(descriptor: descriptor).refusal("the key-value database's lock file", lockPath) {
            close(descriptor)
            throw KeyValueStoreError(.storage, refusal)
        }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else {
                close(descriptor)
                throw KeyValueStoreError(.storage, "cannot lock the key-value database for setup (errno \(errno))")
            }
        }
        return descriptor
    }
}

/// `open(2)` of `path` for reading and writing, created 0600 when absent (outside the class, whose
/// own names would hide the C function).
private func openPrivateFile(_ path: String) -> Int32 {
    // Non-blocking: a FIFO put there since the check fails the kind check instead of blocking.
    open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0o600)
}

private func releaseSetupLock(_ descriptor: Int32) {
    flock(descriptor, LOCK_UN)
    close(descriptor)
}

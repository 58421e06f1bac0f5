import KeyValueStore
import Synchronization

/// One `KeyValueDatabase` per file in this process, shared while any holder keeps it. Opening a
/// database file a second time in a process and closing that descriptor releases the POSIX locks
/// SQLite holds on it through the first connection (the locks belong to the process, not the
/// descriptor): the daemon's connection then stopped seeing other processes' commits, and a
/// `keychain kv set` never reached the other device (found by `KeyValueSyncTests` when the
/// daemon's pass began reading the account's group records, decision 0292).
enum KeyValueDatabases {
    private final class Held: Sendable {
        weak let database: KeyValueDatabase?
        init(_ database: KeyValueDatabase) { self.database = database }
    }

    private static let open = Mutex<[String: Held]>([:])

    /// The database at `path`: the one this process has open, else opened (created) now.
    static func database(at path: String) throws(KeyValueStoreError) -> KeyValueDatabase {
        try open.withLock { (open) throws(KeyValueStoreError) -> KeyValueDatabase in
            if let held = open[path]?.database { return held }
            let database = try KeyValueDatabase(path: path)
            open = open.filter { $0.value.database != nil }
            open[path] = Held(database)
            return database
        }
    }
}

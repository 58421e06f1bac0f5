import KeychainStore
import KeyValueStore
import Synchronization

/// One open database per file in this process, shared while any holder keeps it. Opening a
/// database file a second time in a process and closing that descriptor releases the POSIX locks
/// SQLite holds on it through the first connection (the locks belong to the process, not the
/// descriptor): the daemon's connection then stopped seeing other processes' commits, and a
/// `keychain kv set` never reached the other device (found by `KeyValueSyncTests` when the
/// daemon's pass began reading the account's group records, decision 0292).
final class OnePerFile<Value: AnyObject & Sendable>: Sendable {
    private final class Held: Sendable {
        weak let value: Value?
        init(_ value: Value) { self.value = value }
    }

    private let open = Mutex<[String: Held]>([:])

    /// The value at `path`: the one this process has open, else `opening` it now.
    func value(at path: String, opening: (String) throws -> Value) throws -> Value {
        try open.withLock { open in
            if let held = open[path]?.value { return held }
            let value = try opening(path)
            open = open.filter { $0.value.value != nil }
            open[path] = Held(value)
            return value
        }
    }
}

/// The files this process opens through ``OnePerFile``.
enum OpenFiles {
    /// The key-value databases (the account's, each group's values).
    static let keyValueDatabases = OnePerFile<KeyValueDatabase>()
    /// The shared groups' keychains (decision 0295).
    static let keychains = OnePerFile<Keychain>()
}

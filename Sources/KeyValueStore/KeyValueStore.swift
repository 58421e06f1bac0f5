import Foundation
import GRDB
import SyncCore

/// One key-value store (an app's), with the semantics of Apple's `NSUbiquitousKeyValueStore`:
/// typed values under string keys, Apple's limits, change events for changes that come from
/// elsewhere, and a sync zone of its own (`kv.<name>`).
///
/// Take one from ``KeyValueDatabase/store(named:)``. Every method is synchronous, thread-safe and
/// runs in its own transaction; a write is durable when it returns.
public struct KeyValueStore: Sendable {
    /// The store's name.
    public let name: String
    let database: KeyValueDatabase

    init(name: String, database: KeyValueDatabase) {
        self.name = name
        self.database = database
    }

    /// The store's sync zone, `kv.<name>`.
    public var zone: ZoneID { ZoneID("kv." + name) }

    // MARK: - Reading

    /// The value of `key`, or `nil` when it has none.
    public func value(forKey key: String) throws(KeyValueStoreError) -> KeyValue? {
        let bytes = try database.read { db in
            try Data.fetchOne(db, sql: "SELECT value FROM kv_value WHERE store = ? AND key = ?", arguments: [name, key])
        }
        return try bytes.map { (bytes) throws(KeyValueStoreError) in try KeyValue(canonicalEncoding: bytes) }
    }

    /// The string of `key`; `nil` when it has none or holds another type.
    public func string(forKey key: String) throws(KeyValueStoreError) -> String? { try value(forKey: key)?.stringValue }
    /// The integer of `key`; `nil` when it has none or holds another type.
    public func integer(forKey key: String) throws(KeyValueStoreError) -> Int64? { try value(forKey: key)?.integerValue }
    /// The double of `key`; `nil` when it has none or holds another type.
    public func double(forKey key: String) throws(KeyValueStoreError) -> Double? { try value(forKey: key)?.doubleValue }
    /// The boolean of `key`; `nil` when it has none or holds another type.
    public func bool(forKey key: String) throws(KeyValueStoreError) -> Bool? { try value(forKey: key)?.boolValue }
    /// The data of `key`; `nil` when it has none or holds another type.
    public func data(forKey key: String) throws(KeyValueStoreError) -> Data? { try value(forKey: key)?.dataValue }
    /// The array of `key`; `nil` when it has none or holds another type.
    public func array(forKey key: String) throws(KeyValueStoreError) -> [KeyValue]? { try value(forKey: key)?.arrayValue }
    /// The dictionary of `key`; `nil` when it has none or holds another type.
    public func dictionary(forKey key: String) throws(KeyValueStoreError) -> [String: KeyValue]? {
        try value(forKey: key)?.dictionaryValue
    }

    /// Every key and its value.
    public func dictionaryRepresentation() throws(KeyValueStoreError) -> [String: KeyValue] {
        let rows = try database.read { db in
            try Row.fetchAll(db, sql: "SELECT key, value FROM kv_value WHERE store = ?", arguments: [name])
                .map { (key: $0[0] as String, value: $0[1] as Data) }
        }
        var result: [String: KeyValue] = [:]
        for row in rows { result[row.key] = try KeyValue(canonicalEncoding: row.value) }
        return result
    }

    /// The number of keys with a value and their total size as the limits count it.
    public func usage() throws(KeyValueStoreError) -> (keys: Int, bytes: Int) {
        try database.read { db in try usage(db) }
    }

    // MARK: - Writing

    /// Sets `value` for `key`, replacing any value it had.
    /// - Throws: ``KeyValueStoreError`` when the key or value breaks a limit of
    ///   ``KeyValueLimits``, or the value is or holds a double that is NaN or infinite
    ///   (``KeyValueStoreError/Code/nonFiniteNumber``); then nothing changes.
    public func set(_ value: KeyValue, forKey key: String) throws(KeyValueStoreError) {
        try KeyValueLimits.validate(key: key)
        try KeyValueLimits.validate(value: value)
        let modifiedAt = now
        let size = KeyValueLimits.size(key: key, value: value)
        try database.write { db in
            let before = try usage(db)
            let previous = try Int.fetchOne(db, sql: "SELECT size FROM kv_value WHERE store = ? AND key = ?", arguments: [name, key])
            let keys = before.keys + (previous == nil ? 1 : 0)
            let bytes = before.bytes - (previous ?? 0) + size
            if keys > KeyValueLimits.maximumKeys && keys > before.keys {
                throw KeyValueStoreError(.tooManyKeys, "the store would hold \(keys) keys; at most \(KeyValueLimits.maximumKeys) are allowed")
            }
            if bytes > KeyValueLimits.maximumStoreBytes && bytes > before.bytes {
                throw KeyValueStoreError(
                    .storeTooLarge, "the store would hold \(bytes) bytes; at most \(KeyValueLimits.maximumStoreBytes) are allowed")
            }
            try writeLocal(db, key: key, value: value, modifiedAt: modifiedAt)
        }
    }

    /// Sets a string.
    public func set(_ value: String, forKey key: String) throws(KeyValueStoreError) { try set(.string(value), forKey: key) }
    /// Sets an integer.
    public func set(_ value: Int64, forKey key: String) throws(KeyValueStoreError) { try set(.integer(value), forKey: key) }
    /// Sets a double.
    public func set(_ value: Double, forKey key: String) throws(KeyValueStoreError) { try set(.double(value), forKey: key) }
    /// Sets a boolean.
    public func set(_ value: Bool, forKey key: String) throws(KeyValueStoreError) { try set(.bool(value), forKey: key) }
    /// Sets data.
    public func set(_ value: Data, forKey key: String) throws(KeyValueStoreError) { try set(.data(value), forKey: key) }
    /// Sets an array.
    public func set(_ value: [KeyValue], forKey key: String) throws(KeyValueStoreError) { try set(.array(value), forKey: key) }
    /// Sets a dictionary.
    public func set(_ value: [String: KeyValue], forKey key: String) throws(KeyValueStoreError) {
        try set(.dictionary(value), forKey: key)
    }

    /// Removes the value of `key`, leaving a tombstone for sync. Removing a key without a value
    /// does nothing.
    /// - Returns: Whether the key had a value.
    @discardableResult
    public func removeValue(forKey key: String) throws(KeyValueStoreError) -> Bool {
        try KeyValueLimits.validate(key: key)
        let modifiedAt = now
        return try database.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM kv_value WHERE store = ? AND key = ?", arguments: [name, key]) != nil else {
                return false
            }
            try writeLocal(db, key: key, value: nil, modifiedAt: modifiedAt)
            return true
        }
    }

    // MARK: - Sync and events

    /// Makes sure every change is on disk and, when a sync engine is attached, asks it for a sync
    /// round. Like Apple's, it does not wait for the round.
    /// - Returns: Whether the database is usable and the attached engine (if any) took the request.
    @discardableResult
    public func synchronize() -> Bool {
        do {
            // Every write is committed when it returns; checkpointing moves it into the main file.
            try database.queue.writeWithoutTransaction { db in _ = try db.checkpoint(.passive) }
        } catch {
            return false
        }
        guard let engine = database.engines.withLock({ $0[name] }) else { return true }
        return engine.requestSync(of: zone)
    }

    /// Attaches the sync engine that ``synchronize()`` asks for rounds; replaces any other.
    public func attach(_ engine: any KeyValueSyncEngine) {
        database.engines.withLock { $0[name] = engine }
    }

    /// Detaches the sync engine.
    public func detachEngine() {
        _ = database.engines.withLock { $0.removeValue(forKey: name) }
    }

    /// The changes that come from elsewhere (a sync, a limit broken by a sync, an account
    /// change), in the order they were committed, from now on. Local writes send no event.
    public func changes() -> AsyncStream<KeyValueChange> {
        database.broadcaster.subscribe(store: name)
    }

    // MARK: - Helpers

    var now: Int64 { Int64((database.configuration.now().timeIntervalSince1970 * 1000).rounded(.down)) }

    func usage(_ db: Database) throws -> (keys: Int, bytes: Int) {
        let row = try Row.fetchOne(db, sql: "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM kv_value WHERE store = ?", arguments: [name])!
        return (row[0], row[1])
    }
}

import DurableSQLite
import Foundation
import GRDB
import SyncCore

/// What the sync engine needs from a store: the journal of local changes, each key's versions,
/// and remote versions applied under the deterministic per-key rule (docs/decisions/0062).
extension KeyValueStore {
    /// How ``applyRemote(_:reason:)`` took a version.
    public enum RemoteOutcome: Hashable, Sendable {
        /// The store already had this version or a later one: nothing changed.
        case stale
        /// The version won: the key's value is now its value (or the key is removed).
        case applied
        /// The version was kept as a concurrent sibling but lost to another: the value is unchanged.
        case lost
    }

    /// The fields whose HMAC is the item ID of `key` in the store's zone: one field `key`, the
    /// key's UTF-8 bytes (pass them to `AccountKeys.itemID(zone:fields:)` with ``zone``).
    public static func itemIDFields(forKey key: String) -> [(name: String, value: [UInt8])] {
        [(name: "key", value: Array(key.utf8))]
    }

    /// Journal entries of this store with a sequence greater than `sequence`, oldest first.
    public func journalEntries(after sequence: Int64, limit: Int = 1000) throws(KeyValueStoreError) -> [KeyValueJournalEntry] {
        try database.read { db in
            try Row.fetchAll(
                db, sql: "SELECT sequence, key, operation, modified_at FROM kv_journal WHERE store = ? AND sequence > ? ORDER BY sequence LIMIT ?",
                arguments: [name, sequence, limit]
            ).map { row in
                guard let operation = KeyValueJournalEntry.Operation(rawValue: row[2]) else {
                    throw KeyValueStoreError(.corruptValue, "a journal entry cannot be decoded")
                }
                return KeyValueJournalEntry(sequence: row[0], store: name, key: row[1], operation: operation, modifiedAt: row[3])
            }
        }
    }

    /// The key's current version: the winner of its versions (a tombstone for a removed key) under
    /// a vector that joins them all; `nil` for a key the store never had.
    public func version(forKey key: String) throws(KeyValueStoreError) -> KeyVersion? {
        let versions = try database.read { db in try storedVersions(db, key: key) }
        guard let resolved = ConflictResolution.resolution(of: versions, vector: .join(versions.map(\.vector))) else { return nil }
        return try KeyVersion(key: key, version: resolved)
    }

    /// The versions kept for `key`: one, or several concurrent ones that no other dominates.
    public func siblingVersions(forKey key: String) throws(KeyValueStoreError) -> [KeyVersion] {
        try database.read { db in try storedVersions(db, key: key) }.map { (version) throws(KeyValueStoreError) in
            try KeyVersion(key: key, version: version)
        }
    }

    /// Every key the store has a version of, tombstones included, in ascending byte order: the
    /// adapter maps item IDs back to keys with them.
    public func allKeys() throws(KeyValueStoreError) -> [String] {
        try database.read { db in
            try String.fetchAll(db, sql: "SELECT DISTINCT key FROM kv_version WHERE store = ? ORDER BY key", arguments: [name])
        }
    }

    /// Applies a version from another device, without journaling it: a version the store already
    /// has (or one older) is stale; otherwise it joins the key's versions, the ones it dominates
    /// go, and the key's value becomes the winner of ``ConflictResolution`` among those left.
    /// When the value changes, subscribers get an event with `reason` and the key; when the store
    /// is then over a limit, a ``KeyValueChange/Reason/quotaViolationChange`` event follows.
    /// Remote versions are never refused for a limit, so every device keeps the same values.
    /// - Parameters:
    ///   - remote: The version (its key checked against its payload).
    ///   - reason: ``KeyValueChange/Reason/serverChange``, or `initialSyncChange` for the first sync.
    @discardableResult
    public func applyRemote(_ remote: KeyVersion, reason: KeyValueChange.Reason = .serverChange) throws(KeyValueStoreError) -> RemoteOutcome {
        try database.write { db in try applyRemote(db, remote, reason: reason) }
    }

    /// Takes the sync engine's version of a local write in place of the store's own: the engine
    /// numbers a device's writes with its own counter, so the same write (same value, time and
    /// writer) gets another vector there. Adopting it makes the store and the engine compare the
    /// same vectors. Does nothing when the key's version is another one by now.
    /// - Returns: Whether the version was adopted.
    @discardableResult
    public func adoptLocalVersion(_ engineVersion: KeyVersion) throws(KeyValueStoreError) -> Bool {
        let adopted = engineVersion.version
        return try database.write { db in
            let device = try database.writingDevice(db)
            let versions = try storedVersions(db, key: engineVersion.key)
            guard versions.count == 1, let local = versions.first, local.device == device, adopted.device == local.device,
                local.isDeleted == adopted.isDeleted, local.modifiedAt == adopted.modifiedAt, local.content == adopted.content
            else { return false }
            try replaceVersions(db, key: engineVersion.key, with: [adopted])
            try db.executeCached(
                sql: "UPDATE kv_store_state SET write_counter = MAX(write_counter, ?) WHERE store = ?",
                arguments: [Int64(clamping: adopted.vector[device]), name])
            return true
        }
    }

    /// Replaces the store's contents for a new account: every value, version and journal entry
    /// goes, and subscribers get an ``KeyValueChange/Reason/accountChange`` event with the keys
    /// that had a value. The new account's values then arrive by sync.
    public func resetForAccountChange() throws(KeyValueStoreError) {
        try database.write { db in try resetForAccountChange(db) }
    }

    func resetForAccountChange(_ db: Database) throws {
        let keys = try String.fetchAll(db, sql: "SELECT key FROM kv_value WHERE store = ? ORDER BY key", arguments: [name])
        for table in ["kv_value", "kv_version", "kv_journal", "kv_store_state"] {
            try db.execute(sql: "DELETE FROM \(table) WHERE store = ?", arguments: [name])
        }
        try publishAfterCommit(db, KeyValueChange(reason: .accountChange, keys: keys))
    }

    // MARK: - Helpers

    func applyRemote(_ db: Database, _ remote: KeyVersion, reason: KeyValueChange.Reason) throws -> RemoteOutcome {
        let key = remote.key
        let versions = try storedVersions(db, key: key)
        if versions.contains(where: { $0.vector.descends(from: remote.vector) }) { return .stale }
        let before = ConflictResolution.resolve(versions)
        let kept = ConflictResolution.maximal(versions + [remote.version])
        let winner = ConflictResolution.resolve(kept)!
        try replaceVersions(db, key: key, with: kept)
        let outcome: RemoteOutcome = winner.sameValue(as: remote.version) ? .applied : .lost
        // A tombstone of a key this device never had changes no value.
        let changed = before.map { !$0.sameValue(as: winner) } ?? !winner.isDeleted
        guard changed else { return outcome }
        try setVisible(db, key: key, winner: try KeyVersion(key: key, version: winner))
        try publishChange(db, key: key, reason: reason)
        return outcome
    }

    /// Publishes a remote change of `key`, and a quota violation when the store is now over a limit.
    func publishChange(_ db: Database, key: String, reason: KeyValueChange.Reason) throws {
        try publishAfterCommit(db, KeyValueChange(reason: reason, keys: [key]))
        let usage = try usage(db)
        if usage.keys > KeyValueLimits.maximumKeys || usage.bytes > KeyValueLimits.maximumStoreBytes {
            try publishAfterCommit(db, KeyValueChange(reason: .quotaViolationChange, keys: [key]))
        }
    }

    /// A local write (`value` nil for a removal): a version over everything seen of the key,
    /// numbered by the store's write counter, replacing every version, journaled.
    func writeLocal(_ db: Database, key: String, value: KeyValue?, modifiedAt: Int64) throws {
        let device = try database.writingDevice(db)
        let seen = VersionVector.join(try storedVersions(db, key: key).map(\.vector))
        let counter = try UInt64.fetchOne(db, sql: "SELECT write_counter FROM kv_store_state WHERE store = ?", arguments: [name]) ?? 0
        let next = max(counter, seen[device]) + 1
        try db.executeCached(
            sql: "INSERT INTO kv_store_state (store, write_counter) VALUES (?, ?) ON CONFLICT (store) DO UPDATE SET write_counter = excluded.write_counter",
            arguments: [name, next])
        let version = try KeyVersion(
            key: key, value: value, vector: seen.written(by: device, counter: next), modifiedAt: modifiedAt,
            device: device, overwritten: seen)
        try replaceVersions(db, key: key, with: [version.version])
        try setVisible(db, key: key, winner: version)
        let operation: KeyValueJournalEntry.Operation = value == nil ? .remove : .set
        try db.executeCached(
            sql: "INSERT INTO kv_journal (store, key, operation, modified_at) VALUES (?, ?, ?, ?)",
            arguments: [name, key, operation.rawValue, modifiedAt])
    }

    func setVisible(_ db: Database, key: String, winner: KeyVersion) throws {
        if let value = winner.value {
            try db.executeCached(
                sql: "INSERT INTO kv_value (store, key, value, size) VALUES (?, ?, ?, ?) ON CONFLICT (store, key) DO UPDATE SET value = excluded.value, size = excluded.size",
                arguments: [name, key, Data(value.canonicalEncoding), KeyValueLimits.size(key: key, value: value)])
        } else {
            try db.executeCached(sql: "DELETE FROM kv_value WHERE store = ? AND key = ?", arguments: [name, key])
        }
    }

    func storedVersions(_ db: Database, key: String) throws -> [ItemVersion] {
        try Row.fetchAll(
            db, sql: "SELECT vector, origin, overwritten, deleted, modified_at, device, content FROM kv_version WHERE store = ? AND key = ?",
            arguments: [name, key]
        ).map { row in
            guard let device = DeviceID(row[5]) else { throw KeyValueStoreError(.corruptValue, "a stored version cannot be decoded") }
            return ItemVersion(
                vector: try VersionVector(canonicalEncoding: row[0] as Data), isDeleted: row[3], modifiedAt: row[4], device: device,
                content: Array(row[6] as Data), origin: try VersionVector(canonicalEncoding: row[1] as Data),
                overwritten: try VersionVector(canonicalEncoding: row[2] as Data))
        }
    }

    /// Makes `versions` the key's versions. Whether the server has a version, and whether it was
    /// sent from here, belong to the version (its vector names one write), not to its row: a
    /// version written again keeps them. (A value taken as a local change is written again as the
    /// engine's record of it; losing its marks there made a device that lost its state twice
    /// take a value it had pushed for a new write, which undid a removal made over it.)
    func replaceVersions(_ db: Database, key: String, with versions: [ItemVersion]) throws {
        let rows = try Row.fetchAll(db, sql: "SELECT vector, synced, sent FROM kv_version WHERE store = ? AND key = ?", arguments: [name, key])
        // One row per vector (the table's primary key).
        let marks = Dictionary(uniqueKeysWithValues: rows.map { ($0[0] as Data, (synced: $0[1] as Int64, sent: $0[2] as Int64)) })
        try db.executeCached(sql: "DELETE FROM kv_version WHERE store = ? AND key = ?", arguments: [name, key])
        for version in versions {
            let vector = Data(version.vector.canonicalEncoding)
            let kept = marks[vector] ?? (synced: 0, sent: 0)
            try db.executeCached(
                sql: "INSERT INTO kv_version (store, key, vector, origin, overwritten, deleted, modified_at, device, content, synced, sent) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                arguments: [
                    name, key, vector, Data(version.origin.canonicalEncoding),
                    Data(version.overwritten.canonicalEncoding), version.isDeleted, version.modifiedAt, version.device.rawValue,
                    Data(version.content), kept.synced, kept.sent,
                ])
        }
    }

    func publishAfterCommit(_ db: Database, _ change: KeyValueChange) throws {
        let broadcaster = database.broadcaster
        let store = name
        db.afterNextTransaction { _ in broadcaster.publish(change, store: store) }
    }
}

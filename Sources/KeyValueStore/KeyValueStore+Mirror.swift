import GRDB
import SyncCore

/// How the sync client keeps a store a mirror of its zone machine's records (docs/decisions/0070):
/// local changes are handed over and replaced by the machine's versions in one transaction, and
/// the machine's versions replace the store's except over a local change it has not taken yet.
extension KeyValueStore {
    /// Hands the local changes after journal sequence `sequence` to the sync engine, in one write
    /// transaction (no other process writes meanwhile). Per key with changes (its latest entry,
    /// in order), `engine` gets the key, its current version (the resolution of its versions;
    /// `nil` for a key without any) and the entry's modification time, and returns the engine's
    /// version of that state. The key's versions become exactly that version; `nil` drops them
    /// (a removal the engine never had to send). Nothing is published: the values do not change.
    /// - Returns: The last sequence taken, or `nil` when there were no entries.
    public func takeLocalChanges(
        after sequence: Int64, limit: Int = 1000, _ engine: (_ key: String, _ current: KeyVersion?, _ modifiedAt: Int64) -> ItemVersion?
    ) throws(KeyValueStoreError) -> Int64? {
        try database.write { db in
            let entries = try Row.fetchAll(
                db, sql: "SELECT sequence, key, modified_at FROM kv_journal WHERE store = ? AND sequence > ? ORDER BY sequence LIMIT ?",
                arguments: [name, sequence, limit]
            ).map { (sequence: $0[0] as Int64, key: $0[1] as String, modifiedAt: $0[2] as Int64) }
            guard let last = entries.last else { return nil }
            var latest: [String: Int64] = [:]
            var order: [String] = []
            for entry in entries where latest.updateValue(entry.modifiedAt, forKey: entry.key) == nil { order.append(entry.key) }
            for key in order {
                let versions = try storedVersions(db, key: key)
                let current = try ConflictResolution.resolution(of: versions, vector: .join(versions.map(\.vector))).map {
                    try KeyVersion(key: key, version: $0)
                }
                guard let version = engine(key, current, latest[key] ?? 0) else {
                    if current?.value == nil { try replaceVersions(db, key: key, with: []) }
                    continue
                }
                let adopted = try KeyVersion(key: key, version: version)
                try replaceVersions(db, key: key, with: [version])
                try setVisible(db, key: key, winner: adopted)
                let device = try database.writingDevice(db)
                try db.execute(
                    sql: "UPDATE kv_store_state SET write_counter = MAX(write_counter, ?) WHERE store = ?",
                    arguments: [Int64(clamping: version.vector[device]), name])
            }
            return last.sequence
        }
    }

    /// Makes `version` the key's only version, as the sync engine's machine holds it: the machine
    /// has resolved the key, so its version replaces whatever the store kept (no vectors are
    /// compared). A key with a local change after journal sequence `sequence` (one the engine has
    /// not taken yet) is left as it is; the engine's next round takes the change over what it has
    /// seen. Subscribers get an event with `reason` when the key's value changes, and a
    /// ``KeyValueChange/Reason/quotaViolationChange`` when the store is then over a limit.
    /// - Returns: Whether the value changed, or `nil` when the key was left alone.
    @discardableResult
    public func mirror(
        _ version: KeyVersion, reason: KeyValueChange.Reason, unlessChangedAfter sequence: Int64
    ) throws(KeyValueStoreError) -> Bool? {
        try database.write { db in
            guard try !hasLocalChange(db, key: version.key, after: sequence) else { return nil }
            let versions = try storedVersions(db, key: version.key)
            guard versions != [version.version] else { return false }
            let before = ConflictResolution.resolve(versions)
            try replaceVersions(db, key: version.key, with: [version.version])
            // A tombstone of a key this device never had changes no value.
            guard before.map({ !$0.sameValue(as: version.version) }) ?? !version.isDeleted else { return false }
            try setVisible(db, key: version.key, winner: version)
            try publishChange(db, key: version.key, reason: reason)
            return true
        }
    }

    /// Drops every version of `key`, and its value, because the sync engine forgot it (the key was
    /// removed elsewhere and the server no longer keeps the removal); subscribers get an event when
    /// the key had a value. A key with a local change after `sequence` is left alone.
    /// - Returns: Whether the key was dropped.
    @discardableResult
    public func applyRemotePurge(
        ofKey key: String, reason: KeyValueChange.Reason, unlessChangedAfter sequence: Int64
    ) throws(KeyValueStoreError) -> Bool {
        try database.write { db in
            guard try !hasLocalChange(db, key: key, after: sequence) else { return false }
            let hadValue = try Bool.fetchOne(db, sql: "SELECT 1 FROM kv_value WHERE store = ? AND key = ?", arguments: [name, key]) != nil
            try replaceVersions(db, key: key, with: [])
            try db.execute(sql: "DELETE FROM kv_value WHERE store = ? AND key = ?", arguments: [name, key])
            if hadValue { try publishAfterCommit(db, KeyValueChange(reason: reason, keys: [key])) }
            return true
        }
    }

    private func hasLocalChange(_ db: Database, key: String, after sequence: Int64) throws -> Bool {
        try Bool.fetchOne(
            db, sql: "SELECT 1 FROM kv_journal WHERE store = ? AND key = ? AND sequence > ? LIMIT 1", arguments: [name, key, sequence]) != nil
    }
}

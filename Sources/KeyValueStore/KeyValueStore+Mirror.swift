import DurableSQLite
import Foundation
import GRDB
import SyncCore

/// How the sync client keeps a store in step with its zone machine (decisions 0070, 0170): local
/// changes are handed over and replaced by the machine's versions in one transaction, and the
/// machine's pulled versions replace the store's in one transaction, unless a key they touch has
/// a local change the machine has not taken yet.
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
                try db.executeCached(
                    sql: "UPDATE kv_store_state SET write_counter = MAX(write_counter, ?) WHERE store = ?",
                    arguments: [Int64(clamping: version.vector[device]), name])
            }
            return last.sequence
        }
    }

    /// Makes each of `versions` its key's only version, as the sync engine's machine holds it, in
    /// one transaction: the machine has resolved the keys, so its versions replace whatever the
    /// store kept (no vectors are compared). When a key has a local change after journal sequence
    /// `sequence` (one the engine has not taken yet), nothing is applied: the engine takes the
    /// change first and decides again (decision 0170). Subscribers get an event with `reason`
    /// for each key whose value changes, and a ``KeyValueChange/Reason/quotaViolationChange``
    /// when the store is then over a limit.
    ///
    /// `pushed` names the versions the server took from this device (by key): each is marked as
    /// one the server has, in the same transaction, unless its key was written after `sequence`
    /// (decision 0186); `sent` the versions about to be sent, marked as sent from here the same way.
    /// A pushed or sent version of the value the store shows under another vector (a resolution
    /// the engine made that kept this value, which no apply stores) becomes the key's version
    /// first: the marks belong to the version the server got. The other versions are marked so
    /// too, except those of the keys in `notOnServer`: versions the engine made (a conflict's
    /// resolution, which the server has once `pushed` names it; decision 0242).
    /// - Returns: The keys changed locally after `sequence`, empty when everything was applied.
    @discardableResult
    public func applyResolved(
        _ versions: [KeyVersion], notOnServer: Set<String> = [], pushed: [String: ItemVersion] = [:], sent: [String: ItemVersion] = [:],
        reason: KeyValueChange.Reason, basedOnJournal sequence: Int64
    ) throws(KeyValueStoreError) -> Set<String> {
        try database.write { db in
            let changed = try Set(versions.map(\.key).filter { try hasLocalChange(db, key: $0, after: sequence) })
            guard changed.isEmpty else { return changed }
            for version in versions {
                let stored = try storedVersions(db, key: version.key)
                let isServers = !notOnServer.contains(version.key)
                guard stored != [version.version] else {
                    if isServers { try markSynced(db, key: version.key, vector: version.version.vector) }
                    continue
                }
                let before = ConflictResolution.resolve(stored)
                try replaceVersions(db, key: version.key, with: [version.version])
                if isServers { try markSynced(db, key: version.key, vector: version.version.vector) }
                // A tombstone of a key this device never had changes no value.
                guard before.map({ !$0.sameValue(as: version.version) }) ?? !version.isDeleted else { continue }
                try setVisible(db, key: version.key, winner: version)
                try publishChange(db, key: version.key, reason: reason)
            }
            for (key, version) in sent where try takeAsShown(db, key: key, version: version, after: sequence) {
                try db.executeCached(
                    sql: "UPDATE kv_version SET sent = 1 WHERE store = ? AND key = ? AND vector = ?",
                    arguments: [name, key, Data(version.vector.canonicalEncoding)])
            }
            for (key, version) in pushed where try takeAsShown(db, key: key, version: version, after: sequence) {
                try markSynced(db, key: key, vector: version.vector, pushedFromHere: true)
            }
            return []
        }
    }

    /// Whether `version`, pushed or about to be, is the one the store shows for `key`: the key has
    /// no local change after `sequence` and its stored versions resolve to the same value. A
    /// value shown under other versions takes `version` in their place, marks kept per vector.
    private func takeAsShown(_ db: Database, key: String, version: ItemVersion, after sequence: Int64) throws -> Bool {
        guard try !hasLocalChange(db, key: key, after: sequence) else { return false }
        let stored = try storedVersions(db, key: key)
        guard stored != [version] else { return true }
        guard let shown = ConflictResolution.resolve(stored), shown.sameValue(as: version) else { return false }
        try replaceVersions(db, key: key, with: [version])
        return true
    }

    /// What the store took from the engine for a key: the join of its versions' vectors, and the
    /// join of those of the versions the server has (nil when none is).
    public struct Taken: Sendable, Equatable {
        public var vector: VersionVector
        public var serverVector: VersionVector?
        /// The versions pushed or sent from here (``applyResolved``'s `pushed` and `sent`).
        public var sent: [VersionVector]

        public init(vector: VersionVector = VersionVector(), serverVector: VersionVector? = nil, sent: [VersionVector] = []) {
            self.vector = vector
            self.serverVector = serverVector
            self.sent = sent
        }
    }

    /// What the store took from the engine for every key without a local change after journal
    /// sequence `sequence`: for finding the keys it holds ahead of the engine's committed state
    /// after a crash between the two commits, and, of those, the versions the server has.
    public func takenVectors(notChangedAfter sequence: Int64) throws(KeyValueStoreError) -> [String: Taken] {
        try database.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT key, vector, synced, sent FROM kv_version v WHERE store = ? AND NOT EXISTS (
                        SELECT 1 FROM kv_journal j WHERE j.store = v.store AND j.key = v.key AND j.sequence > ?)
                    """,
                arguments: [name, sequence])
            var taken: [String: Taken] = [:]
            for row in rows {
                let key: String = row[0]
                let vector = try VersionVector(canonicalEncoding: row[1] as Data)
                var entry = taken[key] ?? Taken()
                entry.vector.join(vector)
                if row[2] as Bool { entry.serverVector = (entry.serverVector ?? VersionVector()).joined(with: vector) }
                if row[2] as Int == 2 || row[3] as Bool { entry.sent.append(vector) }
                taken[key] = entry
            }
            return taken
        }
    }

    /// The keys whose every version is one the server has (applied from it or pushed), with a
    /// value: what a device that lost its sync state holds from an earlier sync, not a change.
    public func syncedKeys() throws(KeyValueStoreError) -> Set<String> {
        try database.read { db in
            Set(try String.fetchAll(db, sql: """
                SELECT v.key FROM kv_version v JOIN kv_value x ON x.store = v.store AND x.key = v.key
                WHERE v.store = ? GROUP BY v.key HAVING MIN(v.synced) >= 1
                """, arguments: [name]))
        }
    }

    /// The values whose one version this device pushed (of any enrolment): the server took it,
    /// or it was sent and its answer never came (decisions 0247, 0253); not written locally since:
    /// a device back without its sync state pushes each again as that version, which a server that
    /// lost it takes back, and which a removal made over it supersedes.
    public func pushedVersions() throws(KeyValueStoreError) -> [String: ItemVersion] {
        try database.read { db in
            let keys = try String.fetchAll(db, sql: """
                SELECT v.key FROM kv_version v JOIN kv_value x ON x.store = v.store AND x.key = v.key
                WHERE v.store = ? GROUP BY v.key HAVING COUNT(*) = 1 AND (MIN(v.synced) = 2 OR MIN(v.sent) = 1)
                """, arguments: [name])
            var versions: [String: ItemVersion] = [:]
            for key in keys {
                if let version = try storedVersions(db, key: key).first, !version.isDeleted { versions[key] = version }
            }
            return versions
        }
    }

    /// Marks a stored version as one the server has: 1 when applied from it, 2 when this device
    /// pushed it (which a later apply of the same version does not lower).
    private func markSynced(_ db: Database, key: String, vector: VersionVector, pushedFromHere: Bool = false) throws {
        try db.executeCached(
            sql: "UPDATE kv_version SET synced = MAX(synced, ?) WHERE store = ? AND key = ? AND vector = ?",
            arguments: [pushedFromHere ? 2 : 1, name, key, Data(vector.canonicalEncoding)])
    }

    private func hasLocalChange(_ db: Database, key: String, after sequence: Int64) throws -> Bool {
        try Bool.fetchOne(
            db, sql: "SELECT 1 FROM kv_journal WHERE store = ? AND key = ? AND sequence > ? LIMIT 1", arguments: [name, key, sequence]) != nil
    }
}

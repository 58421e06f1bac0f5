import Foundation
import GRDB
import KeychainModel

/// Applying what a sync round pulled: many remote changes in one transaction, never journaled,
/// and never over a local change the sync engine has not taken into account (decision 0054).
extension Keychain {
    /// Applies `changes` in order, in one transaction: all of them, or none.
    ///
    /// Stored items keep the dates they bring; nothing is journaled. When `journalSequence` is
    /// given and the change journal has an entry after it for an item that one of the changes
    /// writes or deletes, nothing is applied: the local change happened after the engine read the
    /// journal, and overwriting it would lose it.
    ///
    /// - Parameters:
    ///   - changes: The changes, applied in this order.
    ///   - journalSequence: The last journal entry the changes were decided with, or nil to apply
    ///     unconditionally.
    ///   - versions: The version each written item is at after the changes, recorded in the same
    ///     transaction (see ``remoteVersionTag(of:owner:)``); nil records nothing.
    /// - Returns: ``RemoteApplyOutcome/applied``, or the items changed locally since.
    /// - Throws: ``KeychainStatus/param`` when a stored item is not synchronizable or is
    ///   `ThisDeviceOnly` (then nothing is applied), ``KeychainStatus/interactionNotAllowed``
    ///   when a class it needs is locked.
    @discardableResult
    public func applyRemote(_ changes: [RemoteChange], basedOnJournal journalSequence: Int64? = nil, versions: RemoteVersionTags? = nil)
        throws(KeychainError) -> RemoteApplyOutcome
    {
        let prepared = try changes.map { change throws(KeychainError) -> RemoteChange in
            switch change {
            case .store(let item):
                guard item.isSynchronizable else { throw KeychainError(.param, "a remote item must be synchronizable") }
                return .store(try preparedKeepingDates(item))
            case .keepInHistory(let item, let tag):
                return .keepInHistory(try preparedKeepingDates(item), versionTag: tag)
            case .delete:
                return change
            }
        }
        let recorded = now
        return try write { db, state in
            // Each written item's key index, made once for the race check and the write.
            let keys = try state.metadata
            let indexes = prepared.map { $0.writtenKey.map(keys.keyIndex) }
            // The keys journaled after the position, read once for the race check and the pushed tags.
            let needsJournal = indexes.contains { $0 != nil } || !(versions?.pushed.isEmpty ?? true) || !(versions?.sent.isEmpty ?? true)
            let journaled = try journalSequence.flatMap { needsJournal ? try journaledKeys(db, after: $0) : nil }
            if let journaled {
                let changed = Set(zip(prepared, indexes).compactMap { change, index in
                    index.flatMap { journaled.contains($0) ? change.writtenKey : nil }
                })
                if !changed.isEmpty { return .changedLocally(changed) }
            }
            for (change, index) in zip(prepared, indexes) {
                switch change {
                case .store(let item):
                    let index = index ?? keys.keyIndex(item.primaryKey)
                    let stored = try fetchStored(db, keyIndex: index, opening: nil, secrets: false)
                    if let stored {
                        try db.cachedStatement(sql: "DELETE FROM item WHERE id = ?").execute(arguments: [stored.rowID])
                    }
                    try insert(db, item, identity: stored?.identity ?? Self.newIdentity(), state: state, keyIndex: index)
                case .delete(let primaryKey):
                    // Not journaled: the row's ID is all the deletion needs.
                    if let stored = try fetchStored(db, keyIndex: index ?? keys.keyIndex(primaryKey), opening: nil, secrets: false) {
                        try deleteRow(db, stored, journaled: false)
                    }
                case .keepInHistory(let item, let tag):
                    try insertHistory(db, item, versionTag: tag, state: state, recorded: recorded)
                }
            }
            if let versions { try record(versions, journaled: journaled, keys: state.metadata, db) }
            return .applied
        }
    }

    /// Applies one remote version of a synchronizable item (see ``applyRemote(_:basedOnJournal:)``).
    public func applyRemoteVersion(_ remote: Item) throws(KeychainError) {
        try applyRemote([.store(remote)])
    }

    /// Applies one remote deletion; deleting an absent item is not an error.
    public func applyRemoteDeletion(of primaryKey: PrimaryKey) throws(KeychainError) {
        try applyRemote([.delete(primaryKey)])
    }

    /// The version tag the last apply by `owner` recorded for `primaryKey`; nil when none did (or
    /// another owner did last).
    public func remoteVersionTag(of primaryKey: PrimaryKey, owner: String) throws(KeychainError) -> [UInt8]? {
        try remoteVersionTags(of: [primaryKey], owner: owner)[primaryKey]
    }

    /// The version tags the last applies recorded for `primaryKeys`, in one read: those `owner`'s
    /// applies recorded (as ``remoteVersionTag(of:owner:)``), or, with no owner, whoever's (as
    /// ``remoteVersionTag(of:)``). A key without one is missing.
    public func remoteVersionTags(of primaryKeys: [PrimaryKey], owner: String?) throws(KeychainError) -> [PrimaryKey: [UInt8]] {
        guard !primaryKeys.isEmpty else { return [:] }
        return try read { db, state in
            // A keychain that never took a version (a first sync's whole read) computes no index.
            guard try Self.holdsRemoteVersionTags(db) else { return [:] }
            let keys = try state.metadata
            let statement = try owner == nil
                ? db.cachedStatement(sql: "SELECT version_tag FROM remote_version WHERE key_index = ?")
                : db.cachedStatement(sql: "SELECT version_tag FROM remote_version WHERE key_index = ? AND owner = ?")
            var tags: [PrimaryKey: [UInt8]] = [:]
            for primaryKey in primaryKeys {
                let index = keys.keyIndex(primaryKey)
                let arguments: StatementArguments = owner.map { [index, $0] } ?? [index]
                if let tag = try Data.fetchOne(statement, arguments: arguments) { tags[primaryKey] = Array(tag) }
            }
            return tags
        }
    }

    /// Whether any apply, of this enrolment or an earlier one, recorded a version tag: the
    /// keychain took versions from a server before (decision 0175).
    public func hasRemoteVersionTags() throws(KeychainError) -> Bool {
        try readWithoutState { db in try Self.holdsRemoteVersionTags(db) }
    }

    private static func holdsRemoteVersionTags(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM remote_version)") ?? false
    }

    /// The version tag the last apply recorded for `primaryKey`, whoever made it; nil when no apply did.
    public func remoteVersionTag(of primaryKey: PrimaryKey) throws(KeychainError) -> [UInt8]? {
        try remoteVersionTags(of: [primaryKey], owner: nil)[primaryKey]
    }

    /// The version tags, of any enrolment, of the items not written locally since the apply that
    /// recorded them: each item holds exactly the value of its tagged version (decision 0175).
    public func unchangedRemoteVersionTags() throws(KeychainError) -> [PrimaryKey: [UInt8]] {
        try unchangedRemoteVersions().mapValues(\.tag)
    }

    /// The items not written locally since the apply that recorded them, of any enrolment: each
    /// one's version tag (decision 0175); when known, the server's versions its value was decided from
    /// (see ``RemoteVersionTags/serverVersions``, decision 0243); and, for one pushed whose answer
    /// never came, the version sent (``RemoteVersionTags/sent``, decision 0247).
    /// - Parameter owner: When given, only those of earlier enrolments than `owner`.
    public func unchangedRemoteVersions(notOwnedBy owner: String? = nil) throws(KeychainError) -> [PrimaryKey: UnchangedRemoteVersion] {
        try read { db, state in
            let keys = try state.metadata
            var versions: [PrimaryKey: UnchangedRemoteVersion] = [:]
            let columns = "SELECT key_index, sealed_key, version_tag, server_version, sent_version FROM remote_version WHERE changed_locally = 0"
            let rows = try owner.map { try Row.fetchCursor(db, sql: columns + " AND owner != ?", arguments: [$0]) } ?? Row.fetchCursor(db, sql: columns)
            while let row = try rows.next() {
                let key = try Self.remoteVersionKey(row, keys)
                versions[key] = UnchangedRemoteVersion(
                    tag: Array(row[2] as Data), serverVersion: (row[3] as Data?).map(Array.init), sentVersion: (row[4] as Data?).map(Array.init))
            }
            return versions
        }
    }

    /// Whether any copy taken from a server by an owner other than `owner` is unchanged since:
    /// ``unchangedRemoteVersions(notOwnedBy:)`` without reading them.
    public func hasUnchangedRemoteVersions(notOwnedBy owner: String) throws(KeychainError) -> Bool {
        try readWithoutState { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM remote_version WHERE changed_locally = 0 AND owner != ?)", arguments: [owner]) ?? false
        }
    }

    /// Every version tag the applies by `owner` recorded, by primary key, each with the server's
    /// versions recorded with it (``RemoteVersionTags/serverVersions``), when known, and whether
    /// the tagged version was sent or pushed from here (``RemoteVersionTags/sent``, `pushed`).
    public func remoteVersionTags(owner: String) throws(KeychainError) -> [PrimaryKey: (tag: [UInt8], serverVersion: [UInt8]?, wasSent: Bool)] {
        try read { db, state in
            let keys = try state.metadata
            var tags: [PrimaryKey: (tag: [UInt8], serverVersion: [UInt8]?, wasSent: Bool)] = [:]
            let rows = try Row.fetchCursor(
                db, sql: "SELECT key_index, sealed_key, version_tag, server_version, sent_version IS NOT NULL FROM remote_version WHERE owner = ?",
                arguments: [owner])
            while let row = try rows.next() {
                tags[try Self.remoteVersionKey(row, keys)] = (Array(row[2] as Data), (row[3] as Data?).map(Array.init), row[4])
            }
            return tags
        }
    }

    /// The primary key of a remote version row whose first columns are `key_index, sealed_key`.
    private static func remoteVersionKey(_ row: Row, _ keys: MetadataKeys) throws -> PrimaryKey {
        let index: Data = row[0]
        return try keys.openKey(row[1], .remoteVersionKey, identity: Array(index))
    }

    /// Records the tags; a pushed version counts as changed locally when its key was journaled
    /// after the apply's position (`journaled`; nil: no position, so unknown, so changed), a
    /// replaced one always.
    private func record(_ versions: RemoteVersionTags, journaled: Set<Data>?, keys: MetadataKeys, _ db: Database) throws {
        // An existing row is updated in place and keeps its sealed key; only a new row has its key
        // sealed (a GCM box per row a pull or a push answer only re-tags would be thrown away).
        let update = try db.cachedStatement(sql: """
            UPDATE remote_version SET owner = ?, version_tag = ?, changed_locally = ?, server_version = ?, sent_version = ?
            WHERE key_index = ?
            """)
        let insert = try db.cachedStatement(sql: """
            INSERT INTO remote_version (key_index, sealed_key, owner, version_tag, changed_locally, server_version, sent_version)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """)
        let none: Data? = nil
        func write(_ primaryKey: PrimaryKey, _ tag: [UInt8], changedLocally: Bool?, server: Data?, sent: Data?) throws {
            let key = MetadataKeys.IndexedKey(primaryKey, keys: keys)
            let changed = changedLocally ?? journaled.map { $0.contains(key.index) } ?? true
            try update.execute(arguments: [versions.owner, Data(tag), changed, server, sent, key.index])
            guard db.changesCount == 0 else { return }
            try insert.execute(arguments: [key.index, try key.sealed(.remoteVersionKey, keys: keys), versions.owner, Data(tag), changed, server, sent])
        }
        for (primaryKey, tag) in versions.tags {
            try write(primaryKey, tag, changedLocally: false, server: versions.serverVersions[primaryKey].map { Data($0) }, sent: none)
        }
        for (primaryKey, sent) in versions.sent {
            try write(primaryKey, sent.tag, changedLocally: nil, server: versions.serverVersions[primaryKey].map { Data($0) }, sent: Data(sent.version))
        }
        for (primaryKey, tag) in versions.pushed {
            try write(primaryKey, tag, changedLocally: nil, server: Data(tag), sent: versions.pushedVersions[primaryKey].map { Data($0) })
        }
        for (primaryKey, tag) in versions.replaced {
            try write(primaryKey, tag, changedLocally: true, server: none, sent: none)
        }
        try db.cachedStatement(sql: "INSERT INTO remote_apply (id, count) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET count = count + 1")
            .execute()
    }

    /// How many applies recorded version tags so far: a sync state that committed after the
    /// last of them, and held every tag before it, holds every tag (decision 0279).
    public func remoteApplyCount() throws(KeychainError) -> Int64 {
        try readWithoutState { db in try Int64.fetchOne(db, sql: "SELECT count FROM remote_apply WHERE id = 1") ?? 0 }
    }

    /// The key indexes of the primary keys the change journal has entries for after `sequence`.
    private func journaledKeys(_ db: Database, after sequence: Int64) throws -> Set<Data> {
        try Set(Data.fetchAll(db.cachedStatement(sql: "SELECT key_index FROM change_journal WHERE sequence > ?"), arguments: [sequence]))
    }

    /// Applies the add defaults but keeps the dates the item brings (a version from elsewhere).
    func preparedKeepingDates(_ item: Item) throws(KeychainError) -> Item {
        var prepared = try ItemRules.preparedForAdd(item, now: now, defaultAccessGroup: configuration.defaultAccessGroup)
        prepared.attributes.creationDate = item.attributes.creationDate ?? prepared.attributes.creationDate
        prepared.attributes.modificationDate = item.attributes.modificationDate ?? prepared.attributes.modificationDate
        return prepared
    }
}

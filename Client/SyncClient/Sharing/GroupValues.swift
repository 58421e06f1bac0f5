import Foundation
import KeychainCrypto
import KeyValueStore
import SyncCore

/// A shared group's values (decision 0292): one key-value store per group, in a database file of
/// its own beside the keychain, synced as the group's zone by the same driver and rule as an
/// account's stores. Its versions are sealed under the group's key of the newest epoch and signed
/// by this account's identity; the group log this device verified admits their writers
/// (decision 0291). The server keeps the zone under the group's hidden account (0290).
package struct GroupValues: Sendable {
    let groups: Groups
    var session: ClientSession { groups.session }

    package init(groups: Groups) {
        self.groups = groups
    }

    /// The name of the one store a group's database holds.
    static let storeName = "shared"

    /// The zone of `group`'s values, on the server and in this device's state: named by the
    /// group, so it is no zone of the account's.
    static func zone(of group: [UInt8]) -> ZoneID { ZoneID("g." + group.hexString) }

    /// The database file of `group`'s values beside the keychain at `keychainPath`
    /// (`keychain.db` → `keychain.group-<id>.kv.sqlite`).
    static func path(of group: [UInt8], besideKeychainAt keychainPath: String) -> String {
        KeyValueDatabase.path(besideKeychainAt: keychainPath, suffix: ".group-\(group.hexString).kv.sqlite")
    }

    /// The group's store on this device, as it is (its database created on first use).
    package func store(of group: Groups.Group) throws(SyncClientError) -> KeyValueStore {
        try SyncClientError.mapping { () throws -> KeyValueStore in
            let database = try KeyValueDatabases.database(at: Self.path(of: group.log.group, besideKeychainAt: session.keychain.path))
            _ = try database.bind(toDevice: session.enrolment.device)
            return try database.store(named: Self.storeName)
        }
    }

    /// The group's store, brought in step with the server first: what every member's devices
    /// wrote and the log admits, and this device's writes pushed, `write` first among them.
    /// - Throws: `invalidInput` when the account is no longer a member or does not hold the
    ///   group's key (nothing is then written); the driver's errors (a refused writer is a
    ///   problem the sync reports).
    @discardableResult
    package func synced(_ group: Groups.Group, writing write: ((KeyValueStore) throws -> Void)? = nil) async throws -> KeyValueStore {
        let (identity, keys) = try access(group)
        let store = try store(of: group)
        if let write { try SyncClientError.mapping { try write(store) } }
        let zone = zone(of: group, keys: keys)
        // The group log admits writers and says whose statements count; versions and statements
        // are signed by this account's identity (decisions 0291, 0294).
        let clock = TrustedServerClock(server: session.connection.serverClock, database: session.database)
        let witness = try ZoneWitness(
            database: session.database, account: Self.context(of: group.log.group), device: session.enrolment.device,
            signingKey: try identity.versionSigner().key, keys: keys, now: { clock.now() }, group: group.log)
        let driver = try ZoneDriver(
            local: try SyncClientError.mapping { try KeyValueZone(store: store, keys: keys) }, database: session.database,
            server: zone.server, sealer: zone.sealer, device: session.enrolment.device, witness: witness, logger: session.logger)
        _ = try await driver.syncUntilInStep()
        return store
    }

    /// The group's zone as this account's devices reach it: the server's side, and the sealer over
    /// the group's keys (its signer is the witness's, decision 0291).
    private func zone(of group: Groups.Group, keys: AccountKeys) -> RevokedWrites.Zone {
        let id = group.log.group, zone = Self.zone(of: id)
        return RevokedWrites.Zone(
            server: ZoneTransport(connection: session.connection, zone: zone, group: id.hexString),
            sealer: VersionSealer(keys: keys, account: Self.context(of: id), zone: zone))
    }

    /// What a group's blobs and statements name as their account: the group, so that none of them
    /// reads as an account's.
    static func context(of group: [UInt8]) -> String { "group " + group.hexString }

    /// The digests of the blobs in the group's zone that `group`'s log admits now and `removed`
    /// (the same log with a removal appended) would refuse: what the remover vouches for
    /// (decision 0293), read in full from the server as a full resync reads them.
    package func blobsToVouchFor(removing removed: GroupLog, from group: Groups.Group) async throws -> [[UInt8]] {
        let (_, keys) = try access(group)
        return try await RevokedWrites.digests(in: [zone(of: group, keys: keys)], log: group.log, revoked: removed, device: session.enrolment.device)
    }

    /// This account's identity in the group and the group's keys it holds.
    /// - Throws: `invalidInput` when the account is no longer a member or holds no key.
    private func access(_ group: Groups.Group) throws -> (AccountIdentity, AccountKeys) {
        let identity = try groups.memberIdentity(in: group.log)
        do {
            return (identity, try AccountKeys(groupKeys: try group.log.keys(for: identity)))
        } catch {
            throw SyncClientError(.invalidInput, "this account does not hold the group's key")
        }
    }

    /// Sets `text` under `key` in the group's store, then syncs the group; nothing is written
    /// when the account is no longer a member, or only reads the group (a viewer).
    package func set(_ text: String, forKey key: String, in group: Groups.Group) async throws {
        guard group.log.members[session.enrolment.account]?.role != .viewer else {
            throw SyncClientError(.invalidInput, "this account is a viewer of the group: it reads the group's values but may not change them")
        }
        try await synced(group) { try $0.set(text, forKey: key) }
    }

    /// The text under `key`, once the group is in step (or, not `syncing`, as this device holds
    /// it); nil when there is none.
    package func text(forKey key: String, in group: Groups.Group, syncing: Bool = true) async throws -> String? {
        let store = syncing ? try await synced(group) : try store(of: group)
        return try SyncClientError.mapping { try store.string(forKey: key) }
    }

    /// The keys of the group's values, once the group is in step, in ascending order.
    package func keys(in group: Groups.Group) async throws -> [String] {
        let store = try await synced(group)
        return try SyncClientError.mapping { try store.dictionaryRepresentation().keys.sorted() }
    }

    /// Brings the values of every group the account recorded and is still a member of in step
    /// (what `sync-client sync` and the daemon run after the account's own zones). A group that
    /// fails does not keep the others from syncing; the first failure is thrown at the end.
    /// - Returns: The groups synced.
    @discardableResult
    package func syncEveryGroup() async throws -> Int {
        // No key-value database: the account recorded no group on this device (and none is made).
        guard FileManager.default.fileExists(atPath: KeyValueDatabase.path(besideKeychainAt: session.keychain.path)) else { return 0 }
        var synced = 0
        var failure: (any Error)?
        for name in try groups.recorded() {
            do {
                let group = try await groups.group(named: name)
                // Removed, or left: `sync-client group members` says so; nothing to sync.
                guard group.log.members[session.enrolment.account] != nil else { continue }
                try await self.synced(group)
                synced += 1
            } catch {
                session.logger.warning("group sync failed", metadata: ["error": "\(error)"])
                if failure == nil { failure = error }
            }
        }
        if let failure { throw failure }
        return synced
    }
}

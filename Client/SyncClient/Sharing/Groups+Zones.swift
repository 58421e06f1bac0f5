import Foundation
import KeychainCrypto
import KeyValueStore
import SyncCore
import SyncProtocol

/// A shared group's zones on this device: its values (decision 0292) and its items (0295), each
/// synced by the same driver and rule as an account's zones. Their versions are sealed under the
/// group's key of the newest epoch and signed by this account's identity; the group log this
/// device verified admits their writers (0291) and says whose statements count (0294). The server
/// keeps them under the group's hidden account (0290).
extension Groups {
    /// What a group's blobs and statements name as their account: the group, so that none of them
    /// reads as an account's.
    package static func context(of group: [UInt8]) -> String { "group " + group.hexString }

    /// This account's identity in a group and the group's keys it holds: worked out once per
    /// group in a pass (the keys open with the identity's X-Wing key), then used for both zones.
    typealias Access = (identity: AccountIdentity, keys: AccountKeys)

    /// This account's identity in the group and the group's keys it holds.
    /// - Throws: `invalidInput` when the account is no longer a member or holds no key.
    func access(_ group: Group) throws -> Access {
        let identity = try memberIdentity(in: group.log)
        do {
            return (identity, try AccountKeys(groupKeys: try group.log.keys(for: identity)))
        } catch {
            throw SyncClientError(.invalidInput, "this account does not hold the group's key")
        }
    }

    /// The group's zone `zone` as this account's devices reach it: the server's side, and the
    /// sealer over the group's keys (its signer is the witness's, decision 0291).
    func zone(_ zone: ZoneID, of group: Group, keys: AccountKeys) -> RevokedWrites.Zone {
        let id = group.log.group
        return RevokedWrites.Zone(
            server: ZoneTransport(connection: session.connection, zone: zone, group: id.hexString),
            sealer: VersionSealer(keys: keys, account: Self.context(of: id), zone: zone))
    }

    /// The driver of `zone` over `local`, this device's side of it.
    func driver<Local: ZoneLocalStore>(
        of zone: RevokedWrites.Zone, in group: Group, signedBy identity: AccountIdentity, keys: AccountKeys, local: Local
    ) throws -> ZoneDriver<Local> {
        let clock = TrustedServerClock(server: session.connection.serverClock, database: session.database)
        let witness = try ZoneWitness(
            database: session.database, account: Self.context(of: group.log.group), device: session.enrolment.device,
            signingKey: try identity.versionSigner().key, keys: keys, now: { clock.now() }, group: group.log)
        return try ZoneDriver(
            local: local, database: session.database, server: zone.server, sealer: zone.sealer, device: session.enrolment.device,
            witness: witness, logger: session.logger)
    }

    /// Every zone of `group`'s, for a removal's vouching (decision 0293).
    func zones(of group: Group, keys: AccountKeys) -> [RevokedWrites.Zone] {
        [zone(GroupValues.zone(of: group.log.group), of: group, keys: keys), zone(GroupItems.zone(of: group.log.group), of: group, keys: keys)]
    }

    /// The digests of the blobs in the group's zones that `group`'s log admits now and `removed`
    /// (the same log with a removal appended) would refuse: what the remover vouches for
    /// (decision 0293), read in full from the server as a full resync reads them.
    func blobsToVouchFor(removing removed: GroupLog, from group: Group) async throws -> [[UInt8]] {
        let keys = try access(group).keys
        return try await RevokedWrites.digests(in: zones(of: group, keys: keys), log: group.log, revoked: removed, device: session.enrolment.device)
    }

    /// Brings the values and the items of every group the account recorded and is still a member
    /// of in step (what `sync-client sync` and the daemon run after the account's own zones),
    /// re-keying first a group that is due when this account manages it, and forgets on this
    /// device every group it is no longer a member of (decision 0299). A
    /// group that fails does not keep the others from syncing; the first failure is thrown at the
    /// end.
    /// - Returns: The groups synced.
    @discardableResult
    package func syncEveryGroup() async throws -> Int {
        // No key-value database: the account recorded no group on this device (and none is made).
        guard FileManager.default.fileExists(atPath: KeyValueDatabase.path(besideKeychainAt: session.keychain.path)) else { return 0 }
        var synced = 0
        var failure: (any Error)?
        let records = try GroupRecords(session: session).all()
        try GroupDeparture.forgetUnrecorded(besideKeychainAt: session.keychain.path, recorded: records.map(\.group), state: session.database)
        for record in records {
            do {
                let group = try await rekeyedIfDue(record.name)
                // Removed, or left: `sync-client group members` says so; nothing of it stays here.
                guard group.log.members[account] != nil else {
                    try GroupDeparture.forget(group.log.group, besideKeychainAt: session.keychain.path, state: session.database)
                    continue
                }
                let access = try access(group)
                do {
                    try await syncZones(of: group, as: access)
                } catch where ServerFailure.code(of: error) == ErrorCode.viewerCannotWrite && group.log.members[account]?.role == .viewer {
                    // Changes made here while the account could write, which it no longer may
                    // push, and its user no longer undo: given up, and the group read again as
                    // its members hold it (decision 0299).
                    session.logger.warning("gave up the group's changes this device had not pushed: the account only reads the group now")
                    try GroupDeparture.forget(group.log.group, besideKeychainAt: session.keychain.path, state: session.database)
                    try await syncZones(of: group, as: access)
                }
                synced += 1
            } catch {
                session.logger.warning("group sync failed", metadata: ["error": "\(error)"])
                if failure == nil { failure = error }
            }
        }
        if let failure { throw failure }
        return synced
    }

    /// Brings the group's values, then its items, in step.
    private func syncZones(of group: Group, as access: Access) async throws {
        _ = try await GroupValues(groups: self).synced(group, as: access)
        _ = try await GroupItems(groups: self).synced(group, as: access)
    }
}

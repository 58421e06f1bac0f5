import KeychainCrypto
import SyncProtocol

/// How a member's card stops writing in a group (decisions 0293, 0297, 0299, 0300): a removal, an
/// update of a member's identity, a leave, each answering for the departing card's blobs; and the
/// new key epoch a leave or an update makes due, which a manager's device starts.
extension Groups {
    /// Removes `member` from the group `name`: a new key epoch, sealed to the others only. The
    /// entry vouches for every blob of the member's the group's zones hold now, so those stay
    /// taken while anything it signs later under an old epoch is refused (decision 0293).
    package func remove(_ member: String, from name: String) async throws -> Group {
        let vouching = try await vouches(of: member, in: name) { group, identity, vouching in
            guard group.log.members[member] != nil else { return nil }
            return try group.log.removing(member, current: try currentKey(of: group, for: identity), by: identity, vouching: vouching).entry
        }
        return try await change(name) { group, identity in
            guard group.log.members[member] != nil else { throw SyncClientError(.invalidInput, "\(member) is not a member") }
            return try Self.bounded(try group.log.removing(member, current: try currentKey(of: group, for: identity), by: identity, vouching: vouching).entry)
        }
    }

    /// What the entry `departure` makes (given the digests it carries) answers for in the group
    /// `name` (decisions 0293, 0297): the digests of the blobs in its zones that the log admits now
    /// and would refuse with the entry appended. Returned for the entry to carry; or, when the
    /// entry would then not fit the log's bound, appended first in `vouch` entries ahead of the
    /// departure of `member` (decision 0300), and none returned. None when it makes no entry.
    private func vouches(
        of member: String, in name: String, departure: (Group, AccountIdentity, [[UInt8]]) throws -> [UInt8]?
    ) async throws -> [[UInt8]] {
        let group = try await group(named: name)
        let identity = try memberIdentity(in: group.log)
        guard let entry = try departure(group, identity, []) else { return [] }
        var departed = group.log
        do {
            try departed.append(entry)
        } catch {
            throw SyncClientError(.invalidInput, "this account may not make that change to the group", underlying: error)
        }
        let digests = try await blobsToVouchFor(removing: departed, from: group)
        guard let full = try departure(group, identity, digests), full.count > GroupLogBounds.maximumEntryBytes else { return digests }
        for start in stride(from: 0, to: digests.count, by: Self.vouchesPerEntry) {
            let part = Array(digests[start..<min(start + Self.vouchesPerEntry, digests.count)])
            _ = try await change(name) { group, identity in
                guard group.log.members[member] != nil else { throw SyncClientError(.invalidInput, "\(member) is not a member") }
                return try group.log.vouching(part, for: member, by: identity)
            }
        }
        return []
    }

    /// The digests one `vouch` entry holds within the log's bound (its other fields and its
    /// signature take well under 1 KiB).
    private static let vouchesPerEntry = (GroupLogBounds.maximumEntryBytes - 1_024) / DeviceLog.vouchDigestSize

    /// `entry`, when it fits the log's bound (what it vouches for went ahead when it would not).
    private static func bounded(_ entry: [UInt8]) throws -> [UInt8] {
        guard entry.count <= GroupLogBounds.maximumEntryBytes else { throw SyncClientError(.invalidInput, "the change does not fit one entry of the group's log") }
        return entry
    }

    /// Records the identity `contact` moved to (its account revoked a device; this account
    /// verified the new card again with `contacts verify`) in the group `name`, and re-keys it: the
    /// old identity, which the revoked device holds, opens no later key, and what it signed is
    /// taken only where this account vouches for it (decision 0297).
    package func update(_ contact: String, in name: String) async throws -> Group {
        guard let card = try contacts.pinned(contact)?.card else {
            throw SyncClientError(.invalidInput, "\(contact) is not a verified contact; `sync-client contacts verify \(contact)` first")
        }
        let vouching = try await vouches(of: contact, in: name) { group, identity, vouching in
            guard let member = group.log.members[contact], !ConstantTime.equals(member.card.fingerprint, card.fingerprint) else { return nil }
            return try group.log.updating(card, by: identity, vouching: vouching)
        }
        _ = try await change(name) { group, identity in
            guard let member = group.log.members[contact] else { throw SyncClientError(.invalidInput, "\(contact) is not a member") }
            guard !ConstantTime.equals(member.card.fingerprint, card.fingerprint) else { return nil }
            return try Self.bounded(try group.log.updating(card, by: identity, vouching: vouching))
        }
        return try await rekeyedIfDue(name)
    }

    /// The group `name`, re-keyed first when its log says a new epoch is due (a member left, or
    /// an identity was updated: the departing card holds the current key) and this account
    /// manages it (owner or admin); as it is otherwise. Every manager's device runs it at each
    /// sync (decision 0299), so what members write after a leave is sealed under a key the leaver
    /// never held once a manager's device has synced.
    package func rekeyedIfDue(_ name: String) async throws -> Group {
        func isDue(_ group: Group) -> Bool { group.log.isDueRekey && group.log.members[account]?.role.manages == true }
        let group = try await group(named: name)
        guard isDue(group) else { return group }
        return try await change(name) { group, identity in
            guard isDue(group) else { return nil }
            return try group.log.rekeying(current: try currentKey(of: group, for: identity), by: identity).entry
        }
    }

    /// This account leaves the group `name` (an owner cannot: it removes the others instead), and
    /// its devices forget it: this one now, the others at their next sync, its items and values
    /// included (decision 0299). The entry vouches for this account's blobs in the group's zones.
    package func leave(_ name: String) async throws {
        // What this account wrote in the group's zones stays taken; anything else its identity
        // signs there later (a revoked device's, with the server's help) is refused (0297).
        let vouching = try await vouches(of: account, in: name) { group, identity, vouching in
            try group.log.leaving(by: identity, vouching: vouching)
        }
        let left = try await change(name) { group, identity in
            try Self.bounded(try group.log.leaving(by: identity, vouching: vouching))
        }
        try GroupRecords(session: session).forget(name)
        try GroupDeparture.forget(left.log.group, besideKeychainAt: session.keychain.path, state: session.database)
    }
}

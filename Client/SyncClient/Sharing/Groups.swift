import Foundation
import KeychainCrypto
import KeyValueStore
import SyncProtocol

/// Shared password groups (decision 0283), their membership: create, invite, accept, list
/// members, change a role; remove, update a member's identity and leave, which end a card's
/// writing, are in Groups+Departures.swift. Every command reads the group's whole log from the server and verifies
/// it from the owner's `create`, against the owner's card this account pinned as a contact (or its
/// own identity, for a group it created), and against how far the account verified it before
/// (``GroupRecords``): the server can refuse to serve, but not add a member, hand out a key of its
/// own, keep a removed member in, or roll the log back unnoticed.
package struct Groups: Sendable {
    let contacts: Contacts
    var session: ClientSession { contacts.session }

    package init(session: ClientSession) { contacts = Contacts(session: session) }

    /// This account's name: how its members' lists name it.
    package var account: String { session.enrolment.account }

    /// A group as its verified log shows it.
    package struct Group: Sendable {
        /// The account's own name for it.
        package var name: String
        package var log: GroupLog
        package var owner: String
    }

    /// A group whose log names this account, not yet accepted here.
    package struct Invitation: Sendable {
        package var log: GroupLog
        package var owner: String
        /// The name it is recorded under once accepted, unless another is given.
        package var suggestedName: String
    }

    /// Creates a group called `name` (this account's name for it) with this account as owner.
    package func create(_ name: String) async throws -> Group {
        try GroupNames.check(name)
        guard try GroupRecords(session: session).record(named: name) == nil else {
            throw SyncClientError(.invalidInput, "this account already has a group called \(name)")
        }
        let identity = try await ownIdentity()
        // Random (the system generator is getrandom's): the server learns nothing from an ID.
        var generator = SystemRandomNumberGenerator()
        let id = (0..<GroupLogEntry.groupIDLength).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let (log, _) = try GroupLog.creating(group: id, by: identity)
        try await send(log.entries[0], at: 0, of: log)
        let group = Group(name: name, log: log, owner: identity.account)
        try record(group)
        return group
    }

    /// Adds `contact` (a verified contact) to the group `name` with `role`, sealing it the
    /// group's current key.
    package func invite(_ contact: String, to name: String, role: GroupLogEntry.Role) async throws -> Group {
        guard let card = try contacts.pinned(contact)?.card else {
            throw SyncClientError(.invalidInput, "\(contact) is not a verified contact; `sync-client contacts add \(contact)` compares the safety code first")
        }
        // A member that left and comes back before the epoch its leave made due would write
        // under the epoch its leave closed, and every device would refuse its versions.
        _ = try await rekeyedIfDue(name)
        return try await change(name) { group, identity in
            guard group.log.members[contact] == nil else { throw SyncClientError(.invalidInput, "\(contact) is a member already") }
            return try group.log.adding(card, role: role, key: try currentKey(of: group, for: identity), by: identity)
        }
    }

    /// Gives `member` `role` in the group `name` (its owner only). A member made a viewer still
    /// holds the current key, so the log makes a new epoch due, which this device starts at once
    /// (decision 0299): what the viewer signs under it is refused.
    package func changeRole(of member: String, to role: GroupLogEntry.Role, in name: String) async throws -> Group {
        _ = try await change(name) { group, identity in
            guard let current = group.log.members[member] else { throw SyncClientError(.invalidInput, "\(member) is not a member") }
            guard current.role != role else { return nil }
            return try group.log.changingRole(of: member, to: role, by: identity)
        }
        return try await rekeyedIfDue(name)
    }

    /// The group `name`, its log read and verified now.
    package func group(named name: String) async throws -> Group {
        guard let record = try GroupRecords(session: session).record(named: name) else {
            throw SyncClientError(.invalidInput, "this account has no group called \(name); `sync-client group list` shows them")
        }
        let log = try await verifiedLog(record.group, from: [record.owner], extending: record)
        let group = Group(name: name, log: log, owner: record.owner.account)
        if log.members[account] == nil, hasLeft(log) {
            // Left on another device of the account, which removed the record: it goes here too
            // (written again, it would outlive that removal, decision 0299).
            try GroupRecords(session: session).forget(name)
        } else if log.entries.count != record.verifiedLength || standing(in: log) != record.standing {
            // A record is a synced value: written again only when the log grew (or the record is
            // older than the standing it holds, 0299).
            try self.record(group)
        }
        return group
    }

    /// The groups this account recorded, by name, each with what the account may do there as its
    /// log last said (decision 0299).
    package func recorded() throws(SyncClientError) -> [(name: String, standing: SharedGroupDirectory.Standing)] {
        try GroupRecords(session: session).all().map { ($0.name, $0.standing) }
    }

    /// The groups whose logs name this account as a member and which it has not accepted, each
    /// verified from an owner this account pinned. A group whose owner is not a verified contact,
    /// or whose log does not verify, is reported in `unverifiable` (the owner's name as the log
    /// claims it), never offered.
    package func invitations() async throws -> (invitations: [Invitation], unverifiable: [String]) {
        let listed = try await session.connection.send(.GET, "/v1/groups", body: nil, as: GroupListResponse.self)
        let known = Set(try GroupRecords(session: session).all().map { $0.group.hexString })
        var invitations: [Invitation] = [], unverifiable: [String] = []
        for summary in listed.groups where !known.contains(summary.group) {
            guard let id = [UInt8](hexString: summary.group), id.count == GroupLogEntry.groupIDLength else { continue }
            // One group the server serves badly is reported; it does not keep the others from being offered.
            guard let served = try? await servedEntries(of: id), let owner = served.first.flatMap(GroupLogEntry.init(unverifiedWire:))?.signer
            else {
                unverifiable.append("an unknown account")
                continue
            }
            // This account's own group, created on another device whose record has not synced here yet.
            if owner == account { continue }
            do {
                let log = try await verifiedLog(id, from: try await ownerCards(owner), served: served, extending: nil)
                guard log.members[session.enrolment.account] != nil else { continue }
                invitations.append(Invitation(log: log, owner: owner, suggestedName: "\(owner)-\(Array(id.prefix(4)).hexString)"))
            } catch {
                unverifiable.append(owner)
            }
        }
        return (invitations, unverifiable)
    }

    /// Records `invitation` as the account's group `name`.
    package func accept(_ invitation: Invitation, as name: String) throws(SyncClientError) -> Group {
        try GroupNames.check(name)
        guard try GroupRecords(session: session).record(named: name) == nil else {
            throw SyncClientError(.invalidInput, "this account already has a group called \(name); accept it under another name (--name)")
        }
        let group = Group(name: name, log: invitation.log, owner: invitation.owner)
        try record(group)
        return group
    }

    // MARK: - Reading and appending

    /// Reads and verifies the group `name`, appends the entry `make` builds for it (none: nothing
    /// to do), and records the result. A conflict (another member appended first) is read again
    /// and the entry rebuilt.
    func change(
        _ name: String, _ make: (Group, AccountIdentity) throws -> [UInt8]?
    ) async throws -> Group {
        for _ in 0..<3 {
            let group = try await self.group(named: name)
            let identity = try memberIdentity(in: group.log)
            guard let entry = try make(group, identity) else { return group }
            var log = group.log
            do {
                try log.append(entry)
            } catch {
                throw SyncClientError(.invalidInput, "this account may not make that change to the group", underlying: error)
            }
            do {
                try await send(entry, at: group.log.entries.count, of: log)
            } catch where ServerFailure.code(of: error) == ErrorCode.logConflict {
                continue
            }
            let changed = Group(name: name, log: log, owner: group.owner)
            try record(changed)
            return changed
        }
        throw SyncClientError(.busy, "other members kept changing the group; try again")
    }

    /// The group's current key, as sealed to `identity`.
    func currentKey(of group: Group, for identity: AccountIdentity) throws -> GroupKey {
        guard let key = try group.log.keys(for: identity)[group.log.epoch] else {
            throw SyncClientError(.untrustedAccountState, "the group's current key is not sealed to this account")
        }
        return key
    }

    /// Whether the group's current key opens with this account's identity (a member's view).
    package func holdsCurrentKey(_ group: Group) -> Bool {
        guard let identity = try? memberIdentity(in: group.log) else { return false }
        return (try? currentKey(of: group, for: identity)) != nil
    }

    private func send(_ entry: [UInt8], at index: Int, of log: GroupLog) async throws {
        let members = log.members.keys.sorted()
        let viewers = log.members.filter { $0.value.role == .viewer }.keys.sorted()
        let request = GroupLogAppendRequest(index: index, entry: Base64Bytes(entry), members: members, viewers: viewers)
        try await session.connection.send(.PUT, "/v1/groups/\(log.group.hexString)/log", body: request)
    }

    private func record(_ group: Group) throws(SyncClientError) {
        try GroupRecords(session: session).save(
            GroupRecords.Record(
                name: group.name, group: group.log.group, owner: group.log.owner, verifiedLength: group.log.entries.count, head: group.log.head,
                standing: standing(in: group.log)))
    }

    /// Whether the last entry of `log` about this account is its own leave.
    private func hasLeft(_ log: GroupLog) -> Bool {
        for wire in log.entries.reversed() {
            guard let entry = GroupLogEntry(unverifiedWire: wire), entry.subject == account else { continue }
            return entry.kind == .leave
        }
        return false
    }

    /// What this account may do in the group by `log`.
    private func standing(in log: GroupLog) -> SharedGroupDirectory.Standing {
        switch log.members[session.enrolment.account]?.role {
        case nil: .departed
        case .viewer: .reads
        default: .writes
        }
    }

    /// The log the server serves for `id`, verified from one of the owner's `cards` and, when the
    /// account recorded the group, checked to extend what it verified before.
    private func verifiedLog(
        _ id: [UInt8], from cards: [AccountIdentityCard], served: [[UInt8]]? = nil, extending record: GroupRecords.Record?
    ) async throws -> GroupLog {
        let served = if let served { served } else { try await servedEntries(of: id) }
        if let record {
            guard served.count >= record.verifiedLength,
                ConstantTime.equals(GroupLogEntry.hash(ofSigned: served[record.verifiedLength - 1]), record.head)
            else {
                throw SyncClientError(
                    .untrustedAccountState,
                    "the server served the group \(record.name)'s membership log shorter than, or different from, the one this account verified (a rollback or a fork)")
            }
        }
        var failure: (any Error)?
        for card in cards {
            var log = GroupLog(group: id, owner: card)
            do {
                for entry in served { try log.append(entry) }
                return log
            } catch {
                failure = error
            }
        }
        let owner = cards.first?.account ?? "its owner"
        throw SyncClientError(.untrustedAccountState, "the group's membership log from \(owner) does not verify", underlying: failure)
    }

    /// The cards a log created by `owner` may start from: this account's own identities (one per
    /// key epoch it holds) for its own groups; a contact's pinned card otherwise.
    private func ownerCards(_ owner: String) async throws -> [AccountIdentityCard] {
        if owner == session.enrolment.account { return try ownIdentities().map { try $0.card() } }
        guard let pinned = try contacts.pinned(owner) else {
            throw SyncClientError(.invalidInput, "the group's owner \(owner) is not a verified contact; `sync-client contacts add \(owner)` first")
        }
        return [pinned.card]
    }

    /// The identity, among this account's, whose card the log holds for it.
    package func memberIdentity(in log: GroupLog) throws -> AccountIdentity {
        guard let member = log.members[session.enrolment.account] else {
            throw SyncClientError(.invalidInput, "this account is no longer a member of the group")
        }
        guard let identity = try ownIdentities().first(where: { (try? $0.card().fingerprint) == member.card.fingerprint }) else {
            throw SyncClientError(
                .invalidInput,
                "this account's identity changed since it joined the group (it revoked a device); the group cannot be changed from this account until an owner updates it")
        }
        return identity
    }

    private func ownIdentities() throws -> [AccountIdentity] {
        session.keys.accountKeys.sorted { $0.key > $1.key }.map { epoch, key in
            AccountIdentity(account: session.enrolment.account, epoch: epoch, accountKey: key)
        }
    }

    /// This account's identity at the newest epoch, its card published (what a new group starts from).
    private func ownIdentity() async throws -> AccountIdentity {
        let card = try await contacts.publishOwnIdentity()
        guard let identity = try ownIdentities().first(where: { (try? $0.card().fingerprint) == card.fingerprint }) else {
            throw SyncClientError(.localStorage, "this account's identity is missing")
        }
        return identity
    }

    /// Every entry the server serves for the group, page by page.
    private func servedEntries(of id: [UInt8]) async throws -> [[UInt8]] {
        let entries: [[UInt8]]
        do {
            entries = try await session.connection.logEntries(
                at: "/v1/groups/\(id.hexString)/log", maximumPage: GroupLogBounds.maximumPage, maximumEntries: GroupLogBounds.maximumEntries,
                log: "a group log")
        } catch where ServerFailure.code(of: error) == ErrorCode.notFound {
            throw SyncClientError(.untrustedAccountState, "the server does not serve the group's log to this account")
        }
        guard !entries.isEmpty else { throw SyncClientError(.untrustedAccountState, "the server served an empty group log") }
        return entries
    }
}

/// The names an account gives its groups: what the command line takes.
enum GroupNames {
    static func check(_ name: String) throws(SyncClientError) {
        guard (1...64).contains(name.utf8.count), !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw SyncClientError(.invalidInput, "a group's name has 1 to 64 bytes and no control characters")
        }
    }
}

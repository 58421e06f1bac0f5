import SyncCore

/// A group's membership log as one member's device verified it (decision 0283): a hash chain of
/// ``GroupLogEntry`` values from the owner's `create`, each signed by the account identity of a
/// member allowed to make it. The chain is checked against the owner's card the device pinned as a
/// contact (0282), so the server can neither make a group in the owner's name nor add a member,
/// hand out a key of its own, or keep a removed member in.
public struct GroupLog: Sendable {
    /// A member as the log admitted it.
    public struct Member: Sendable, Equatable {
        public var card: AccountIdentityCard
        public var role: GroupLogEntry.Role
    }

    public let group: [UInt8]
    /// The owner's card the chain starts from.
    public let owner: AccountIdentityCard
    /// The entries, in wire form, in order.
    public private(set) var entries: [[UInt8]] = []
    /// The current members, by account name.
    public private(set) var members: [String: Member] = [:]
    /// The current group-key epoch (0 before `create`).
    public private(set) var epoch: UInt32 = 0
    /// Whether a member left since the last new epoch: the next owner or admin re-keys.
    public private(set) var isDueRekey = false
    /// The payloads of the entries that handed out keys, with their epochs, in order.
    private var payloads: [(epoch: UInt32, payload: GroupKeyPayload)] = []
    /// Per key epoch, the writers (``AccountIdentityCard/writer``) of every card that could write
    /// at some time during it; and every card a member ever had, by writer
    /// (``refusal(of:context:blob:)``).
    var writers: [UInt32: Set<DeviceID>] = [:]
    var memberCards: [DeviceID: AccountIdentityCard] = [:]
    /// Each current member's writer name for the card the log holds for it.
    var writerOfMember: [String: DeviceID] = [:]
    /// The cards of removed members, each with the first epoch after its latest removal: what such a
    /// card signed under an earlier epoch is taken only when vouched for (decision 0293).
    var removedBefore: [DeviceID: UInt32] = [:]
    /// The blobs removers answered for, by digest.
    var vouched: Set<[UInt8]> = []
    /// `vouch` entries waiting for the departure they answer for, by the departing member: their
    /// signer, how many there are, and their digests (decision 0300).
    var vouchedAhead: [String: (signer: String, entries: Int, digests: Set<[UInt8]>)] = [:]
    /// The most `vouch` entries one signer makes ahead of one departure: about 64,000 digests. A
    /// member may vouch ahead of its own leave, so this bounds what one member can add to the log.
    public static let maximumVouchEntriesAhead = 32

    /// An empty log of `group`, to be verified from the `create` of the owner whose card is `owner`.
    public init(group: [UInt8], owner: AccountIdentityCard) {
        self.group = group
        self.owner = owner
    }

    /// The hash the next entry names.
    public var head: [UInt8] { entries.last.map(GroupLogEntry.hash(ofSigned:)) ?? [UInt8](repeating: 0, count: 32) }

    /// Verifies `wire` as the log's next entry and takes it.
    ///
    /// - Throws: ``CryptoError`` `invalidInput` for a malformed entry or one that breaks a rule (the
    ///   message names it), `authenticationFailed` for a signature that does not verify.
    public mutating func append(_ wire: [UInt8]) throws(CryptoError) {
        let (entry, signed, signature) = try GroupLogEntry.decode(wire)
        guard entry.group == group, entry.index == UInt64(entries.count), entry.previous == head else {
            throw .invalidInput("the group log entry does not extend the log this device verified")
        }
        let signerCard = try signerCard(of: entry)
        guard ConstantTime.equals(entry.signerFingerprint, signerCard.fingerprint) else {
            throw .invalidInput("the group log entry names another card than its signer's")
        }
        guard signerCard.isValidSignature(signature, for: signed) else {
            throw CryptoError(code: .authenticationFailed, message: "the group log entry's signature does not verify")
        }
        try apply(entry)
        entries.append(wire)
        noteWriters()
    }

    /// The card the entry's signer signs with: the pinned owner's for `create`, a member's after.
    private func signerCard(of entry: GroupLogEntry) throws(CryptoError) -> AccountIdentityCard {
        if entries.isEmpty {
            guard entry.kind == .create, entry.signer == owner.account else { throw .invalidInput("a group log starts with its owner's create") }
            return owner
        }
        guard let member = members[entry.signer] else { throw .invalidInput("the group log entry's signer is not a member") }
        return member.card
    }

    private mutating func apply(_ entry: GroupLogEntry) throws(CryptoError) {
        let signerRole = members[entry.signer]?.role
        switch entry.kind {
        case .create:
            guard entries.isEmpty, entry.subject == entry.signer, entry.role == .owner, entry.epoch == 1,
                try Self.card(entry.subjectCard, of: entry.subject).fingerprint == owner.fingerprint
            else { throw .invalidInput("the group's create entry is not its owner's") }
            try takeKeys(entry, recipients: [owner.account], chained: false)
            members[owner.account] = Member(card: owner, role: .owner)
        case .add:
            guard let signerRole, signerRole.manages, members[entry.subject] == nil, let role = entry.role, role != .owner,
                role != .admin || signerRole == .owner, entry.epoch == epoch
            else { throw .invalidInput("the group log entry adds a member it may not") }
            let card = try Self.card(entry.subjectCard, of: entry.subject)
            try takeKeys(entry, recipients: [entry.subject], chained: false)
            members[entry.subject] = Member(card: card, role: role)
        case .remove:
            guard let signerRole, signerRole.manages, let subject = members[entry.subject], subject.role != .owner,
                subject.role != .admin || signerRole == .owner, entry.subject != entry.signer, entry.epoch == epoch + 1
            else { throw .invalidInput("the group log entry removes a member it may not") }
            members[entry.subject] = nil
            let payload = try takeKeys(entry, recipients: members.keys.sorted(), chained: true)
            noteRemoval(of: entry.subject, vouching: payload.vouched + takeVouchedAhead(of: entry.subject, by: entry.signer))
            isDueRekey = false
        case .leave:
            guard entry.subject == entry.signer, let subject = members[entry.subject], subject.role != .owner, entry.epoch == epoch
            else { throw .invalidInput("the group log entry is not a member leaving") }
            let vouches = try entry.payload.isEmpty ? nil : GroupVouches(decoding: entry.payload)
            members[entry.subject] = nil
            let ahead = takeVouchedAhead(of: entry.subject, by: entry.signer)
            if let vouches { noteDeparture(of: subject.card, vouching: vouches.digests + ahead) }
            isDueRekey = true
        case .rekey:
            guard let signerRole, signerRole.manages, entry.epoch == epoch + 1 else {
                throw .invalidInput("the group log entry starts an epoch it may not")
            }
            try takeKeys(entry, recipients: members.keys.sorted(), chained: true)
            isDueRekey = false
        case .role:
            guard signerRole == .owner, let subject = members[entry.subject], subject.role != .owner, let role = entry.role, role != .owner,
                entry.epoch == epoch, entry.payload.isEmpty
            else { throw .invalidInput("the group log entry changes a role it may not") }
            members[entry.subject]?.role = role
            // A member made a viewer still holds the current key: the next epoch ends its writes
            // (decision 0291).
            if role == .viewer, subject.role != .viewer { isDueRekey = true }
        case .update:
            // Another manager, who verified the new card as a contact: an account's own old
            // identity may be a revoked device's. Only the owner updates an admin; an admin may
            // update the owner (whose identity moved and who can then sign nothing).
            guard let signerRole, signerRole.manages, let subject = members[entry.subject], entry.subject != entry.signer,
                subject.role != .admin || signerRole == .owner, entry.epoch == epoch
            else { throw .invalidInput("the group log entry updates a member it may not") }
            let vouches = try entry.payload.isEmpty ? nil : GroupVouches(decoding: entry.payload)
            let card = try Self.card(entry.subjectCard, of: entry.subject)
            guard !ConstantTime.equals(card.fingerprint, subject.card.fingerprint) else {
                throw .invalidInput("the group log entry updates a member to the card it has")
            }
            members[entry.subject]?.card = card
            let ahead = takeVouchedAhead(of: entry.subject, by: entry.signer)
            if let vouches { noteDeparture(of: subject.card, vouching: vouches.digests + ahead) }
            isDueRekey = true
        case .vouch:
            // By the member itself, ahead of its leave; by another manager, ahead of a removal or
            // an update.
            guard let subject = members[entry.subject], entry.epoch == epoch, entry.role == nil, entry.subjectCard.isEmpty,
                entry.signer == entry.subject ? subject.role != .owner : signerRole?.manages == true
            else { throw .invalidInput("the group log entry vouches ahead of a departure its signer may not make") }
            let vouches = try GroupVouches(decoding: entry.payload)
            var ahead = vouchedAhead[entry.subject].flatMap { $0.signer == entry.signer ? $0 : nil } ?? (signer: entry.signer, entries: 0, digests: [])
            guard ahead.entries < Self.maximumVouchEntriesAhead else { throw .invalidInput("the group log entry vouches ahead more than one departure takes") }
            ahead.entries += 1
            ahead.digests.formUnion(vouches.digests)
            vouchedAhead[entry.subject] = ahead
        }
    }

    /// The digests `vouch` entries by `signer` answered for ahead of the departure of `account`
    /// now taken; another signer's are dropped (the departure's signer answers for what it takes).
    private mutating func takeVouchedAhead(of account: String, by signer: String) -> [[UInt8]] {
        guard let ahead = vouchedAhead.removeValue(forKey: account), ahead.signer == signer else { return [] }
        return Array(ahead.digests)
    }

    /// Takes the entry's key payload: sealed to exactly `recipients`, chained to the previous
    /// epoch when the entry starts one after the first.
    @discardableResult
    private mutating func takeKeys(_ entry: GroupLogEntry, recipients: [String], chained: Bool) throws(CryptoError) -> GroupKeyPayload {
        let payload = try GroupKeyPayload(decoding: entry.payload)
        guard payload.wraps.map(\.account).sorted() == recipients.sorted(), payload.previous.isEmpty == !chained,
            payload.vouched.isEmpty || entry.kind == .remove
        else {
            throw .invalidInput("the group log entry seals its key to others than the members")
        }
        epoch = entry.epoch
        payloads.append((entry.epoch, payload))
        return payload
    }

    private static func card(_ bytes: [UInt8], of account: String) throws(CryptoError) -> AccountIdentityCard {
        try AccountIdentityCard(decoding: bytes, of: account)
    }

    // MARK: - Keys

    /// Every epoch's group key `identity`'s account can open: from the newest key sealed to it, the
    /// chain back to epoch 1. Empty for an account the current epoch's key was not sealed to.
    public func keys(for identity: AccountIdentity) throws(CryptoError) -> [UInt32: GroupKey] {
        guard let newest = payloads.last(where: { $0.epoch == epoch && $0.payload.wraps.contains { $0.account == identity.account } }),
            let key = try newest.payload.key(for: identity, group: group, epoch: newest.epoch)
        else { return [:] }
        var keys = [epoch: key]
        var current = key
        for number in stride(from: epoch, to: 1, by: -1) {
            guard let starting = payloads.first(where: { $0.epoch == number && !$0.payload.previous.isEmpty }) else { break }
            current = try starting.payload.previousKey(under: current, group: group, epoch: number)
            keys[number - 1] = current
        }
        return keys
    }

    // MARK: - Making entries

    /// A new group's log, created by `owner` (whose card every member pins), and its first key.
    public static func creating(group: [UInt8], by owner: AccountIdentity) throws(CryptoError) -> (log: GroupLog, key: GroupKey) {
        let card = try owner.card()
        var log = GroupLog(group: group, owner: card)
        let key = GroupKey.generate()
        let payload = try GroupKeyPayload.sealing(key, epoch: 1, group: group, to: [card], previousKey: nil)
        try log.append(
            try log.entry(.create, subject: owner.account, subjectCard: card.encoded, role: .owner, epoch: 1, by: card, payload: payload).signed(by: owner))
        return (log, key)
    }

    /// The entry by which `identity` adds `card`'s account with `role`, sealing it `key` (the current epoch's).
    public func adding(_ card: AccountIdentityCard, role: GroupLogEntry.Role, key: GroupKey, by identity: AccountIdentity) throws(CryptoError) -> [UInt8] {
        let payload = try GroupKeyPayload.sealing(key, epoch: epoch, group: group, to: [card], previousKey: nil)
        return try entry(.add, subject: card.account, subjectCard: card.encoded, role: role, epoch: epoch, by: try identity.card(), payload: payload)
            .signed(by: identity)
    }

    /// The entry by which `identity` removes `account`, and the new epoch's key (`current` is the
    /// current epoch's, chained under the new one).
    /// `vouching` names the digests of the removed member's blobs its remover answers for (decision
    /// 0293): of the removed account's versions, only those are taken from then on.
    public func removing(
        _ account: String, current: GroupKey, by identity: AccountIdentity, vouching: [[UInt8]] = []
    ) throws(CryptoError) -> (entry: [UInt8], key: GroupKey) {
        try newEpoch(
            .remove, subject: account, recipients: members.filter { $0.key != account }.map(\.value.card), current: current, by: identity,
            vouching: vouching)
    }

    /// The entry by which `identity` starts a new epoch for the current members, and its key.
    public func rekeying(current: GroupKey, by identity: AccountIdentity) throws(CryptoError) -> (entry: [UInt8], key: GroupKey) {
        try newEpoch(.rekey, subject: identity.account, recipients: members.values.map(\.card), current: current, by: identity)
    }

    /// The entry by which `identity`'s account leaves, answering for `vouching`, the digests of its
    /// own blobs it read in the group's zones (decision 0297): anything else its card signs under
    /// an epoch up to this one is refused from then on.
    public func leaving(by identity: AccountIdentity, vouching: [[UInt8]]) throws(CryptoError) -> [UInt8] {
        try entry(.leave, subject: identity.account, epoch: epoch, by: try identity.card(), vouches: GroupVouches(vouching)).signed(by: identity)
    }

    /// The entry by which `identity` records `card` as its account's new identity (a contact
    /// `identity`'s account verified again after that account revoked a device), answering for
    /// `vouching`, the digests of the old identity's blobs it read in the group's zones (decision
    /// 0297): anything else the old card signs under an epoch up to this one is refused. A re-key
    /// follows.
    public func updating(_ card: AccountIdentityCard, by identity: AccountIdentity, vouching: [[UInt8]]) throws(CryptoError) -> [UInt8] {
        try entry(.update, subject: card.account, subjectCard: card.encoded, epoch: epoch, by: try identity.card(), vouches: GroupVouches(vouching))
            .signed(by: identity)
    }

    /// The entry by which `identity` answers ahead for `vouching`, part of the digests its coming
    /// removal, update or (its own account's) leave of `account` vouches for, when one entry
    /// cannot hold them all (decision 0300).
    public func vouching(_ vouching: [[UInt8]], for account: String, by identity: AccountIdentity) throws(CryptoError) -> [UInt8] {
        try entry(.vouch, subject: account, epoch: epoch, by: try identity.card(), vouches: GroupVouches(vouching)).signed(by: identity)
    }

    /// The entry by which the owner `identity` gives `account` `role`.
    public func changingRole(of account: String, to role: GroupLogEntry.Role, by identity: AccountIdentity) throws(CryptoError) -> [UInt8] {
        try entry(.role, subject: account, role: role, epoch: epoch, by: try identity.card()).signed(by: identity)
    }

    private func newEpoch(
        _ kind: GroupLogEntry.Kind, subject: String, recipients: [AccountIdentityCard], current: GroupKey, by identity: AccountIdentity,
        vouching: [[UInt8]] = []
    ) throws(CryptoError) -> (entry: [UInt8], key: GroupKey) {
        let key = GroupKey.generate()
        var payload = try GroupKeyPayload.sealing(key, epoch: epoch + 1, group: group, to: recipients, previousKey: current)
        payload.vouched = vouching
        let wire = try entry(kind, subject: subject, epoch: epoch + 1, by: try identity.card(), payload: payload).signed(by: identity)
        return (wire, key)
    }

    private func entry(
        _ kind: GroupLogEntry.Kind, subject: String, subjectCard: [UInt8] = [], role: GroupLogEntry.Role? = nil, epoch: UInt32,
        by signer: AccountIdentityCard, payload: GroupKeyPayload? = nil, vouches: GroupVouches? = nil
    ) -> GroupLogEntry {
        GroupLogEntry(
            group: group, index: UInt64(entries.count), previous: head, kind: kind, subject: subject, subjectCard: subjectCard, role: role,
            epoch: epoch, signer: signer.account, signerFingerprint: signer.fingerprint, payload: payload?.encoded ?? vouches?.encoded ?? [])
    }
}

import KeychainCrypto
import SyncCore
import Testing

/// A group's membership log (decision 0283), and what a server that holds no member's identity
/// tries against it: the ETH Zurich checklist at the level of the log.
@Suite struct GroupLogTests {
    let group = [UInt8](repeating: 7, count: 16)
    let alice = AccountIdentity(account: "alice", epoch: 1, accountKey: AccountKey.generate())
    let bob = AccountIdentity(account: "bob", epoch: 1, accountKey: AccountKey.generate())
    let carol = AccountIdentity(account: "carol", epoch: 1, accountKey: AccountKey.generate())
    /// What the server would use: an identity of its own under a member's name.
    let mallory = AccountIdentity(account: "bob", epoch: 1, accountKey: AccountKey.generate())

    /// Alice's group with Bob (member) and Carol (viewer), as Alice's device holds it, and its key.
    private func aliceBobAndCarol() throws -> (GroupLog, GroupKey) {
        var (log, key) = try GroupLog.creating(group: group, by: alice)
        try log.append(try log.adding(try bob.card(), role: .member, key: key, by: alice))
        try log.append(try log.adding(try carol.card(), role: .viewer, key: key, by: alice))
        return (log, key)
    }

    /// The same entries as another member's device verifies them, from Alice's pinned card.
    private func verified(_ entries: [[UInt8]]) throws -> GroupLog {
        var log = GroupLog(group: group, owner: try alice.card())
        for entry in entries { try log.append(entry) }
        return log
    }

    @Test func membersVerifyTheLogFromTheOwnersPinnedCardAndOpenTheKey() throws {
        let (log, key) = try aliceBobAndCarol()
        let bobs = try verified(log.entries)
        #expect(bobs.members.mapValues(\.role) == ["alice": .owner, "bob": .member, "carol": .viewer])
        #expect(try bobs.keys(for: bob)[1]?.isSameKey(as: key) == true)
        #expect(try bobs.keys(for: carol)[1]?.isSameKey(as: key) == true)
        // A key of the server's own under Bob's name opens nothing sealed to Bob.
        #expect(throws: CryptoError.self) { try bobs.keys(for: mallory) }
    }

    @Test func aGroupTheServerMadeInTheOwnersNameIsRefused() throws {
        // Made with a key of the server's own, under Alice's name: not the card Bob pinned.
        let forger = AccountIdentity(account: "alice", epoch: 1, accountKey: AccountKey.generate())
        let (forged, _) = try GroupLog.creating(group: group, by: forger)
        var bobs = GroupLog(group: group, owner: try alice.card())
        #expect(throws: CryptoError.self) { try bobs.append(forged.entries[0]) }
        #expect(bobs.entries.isEmpty)
    }

    @Test func anInjectedMemberOrKeyIsRefused() throws {
        let (log, key) = try aliceBobAndCarol()
        var bobs = try verified(log.entries)
        // The server signs an add as Bob with a key of its own: not Bob's card.
        let intruder = AccountIdentity(account: "eve", epoch: 1, accountKey: AccountKey.generate())
        let injected = try log.adding(try intruder.card(), role: .member, key: key, by: mallory)
        #expect(throws: CryptoError.self) { try bobs.append(injected) }
        // A new epoch "by Alice", signed by the server: refused; and members may not manage.
        let forgedAlice = AccountIdentity(account: "alice", epoch: 1, accountKey: AccountKey.generate())
        #expect(throws: CryptoError.self) { try bobs.append(try log.rekeying(current: key, by: forgedAlice).entry) }
        #expect(throws: CryptoError.self) { try bobs.append(try log.adding(try intruder.card(), role: .member, key: key, by: bob)) }
        #expect(throws: CryptoError.self) { try bobs.append(try log.removing("alice", current: key, by: bob).entry) }
        #expect(throws: CryptoError.self) { try bobs.append(try log.adding(try intruder.card(), role: .member, key: key, by: carol)) }
        #expect(bobs.entries.count == 3 && bobs.members["eve"] == nil)
    }

    @Test func aRemovedMemberCannotOpenTheNextEpochButTheOthersOpenEveryEpoch() throws {
        var (log, key) = try aliceBobAndCarol()
        let removal = try log.removing("bob", current: key, by: alice)
        try log.append(removal.entry)
        let carols = try verified(log.entries)
        #expect(carols.epoch == 2 && carols.members["bob"] == nil)
        let keys = try carols.keys(for: carol)
        #expect(keys[2]?.isSameKey(as: removal.key) == true && keys[1]?.isSameKey(as: key) == true)
        #expect(try carols.keys(for: bob).isEmpty)
        // A member added afterwards reads the items of every epoch.
        let dave = AccountIdentity(account: "dave", epoch: 1, accountKey: AccountKey.generate())
        try log.append(try log.adding(try dave.card(), role: .member, key: removal.key, by: alice))
        #expect(try verified(log.entries).keys(for: dave).keys.sorted() == [1, 2])
    }

    @Test func aMemberWhoLeavesMakesTheGroupDueARekeyWithoutIt() throws {
        var (log, key) = try aliceBobAndCarol()
        try log.append(try log.leaving(by: bob, vouching: []))
        #expect(log.isDueRekey && log.members["bob"] == nil)
        let rekey = try log.rekeying(current: key, by: alice)
        try log.append(rekey.entry)
        #expect(!log.isDueRekey && log.epoch == 2)
        #expect(try log.keys(for: bob).isEmpty)
        #expect(try log.keys(for: carol)[2]?.isSameKey(as: rekey.key) == true)
    }

    @Test func onlyTheOwnerChangesRolesAndAnAdminManagesMembersButNotAdmins() throws {
        var (log, key) = try aliceBobAndCarol()
        #expect(throws: CryptoError.self) { try log.append(try log.changingRole(of: "carol", to: .member, by: bob)) }
        try log.append(try log.changingRole(of: "bob", to: .admin, by: alice))
        let dave = AccountIdentity(account: "dave", epoch: 1, accountKey: AccountKey.generate())
        try log.append(try log.adding(try dave.card(), role: .member, key: key, by: bob))
        #expect(throws: CryptoError.self) {
            try log.append(try log.adding(try AccountIdentity(account: "erin", epoch: 1, accountKey: AccountKey.generate()).card(), role: .admin, key: key, by: bob))
        }
        #expect(throws: CryptoError.self) { try log.append(try log.removing("alice", current: key, by: bob).entry) }
        try log.append(try log.removing("carol", current: key, by: bob).entry)
        #expect(try verified(log.entries).members.mapValues(\.role) == ["alice": .owner, "bob": .admin, "dave": .member])
    }

    @Test func anOldOrForkedLogIsNotTakenForTheOneVerified() throws {
        var (log, key) = try aliceBobAndCarol()
        var carols = try verified(log.entries)
        let removal = try log.removing("bob", current: key, by: alice)
        try log.append(removal.entry)
        try carols.append(removal.entry)
        // The server replays an entry, or serves another branch at the same index: refused.
        #expect(throws: CryptoError.self) { try carols.append(log.entries[2]) }
        var (fork, _) = try aliceBobAndCarol()
        let other = try fork.rekeying(current: key, by: alice).entry
        #expect(throws: CryptoError.self) { try carols.append(other) }
        try fork.append(other)
        #expect(carols.entries == log.entries)
        // Every byte changed: refused.
        for position in stride(from: 0, to: removal.entry.count, by: 211) {
            var tampered = removal.entry
            tampered[position] ^= 1
            var fresh = try verified(Array(log.entries.prefix(3)))
            #expect(throws: CryptoError.self) { try fresh.append(tampered) }
        }
    }

    /// Bob's account revoked a device: his identity moved to epoch 2. Alice, who verified the new
    /// card as a contact, records it and re-keys; the new epoch opens with his new identity and not
    /// with the old one (which the revoked device holds). Nobody updates itself, and only the owner
    /// updates an admin.
    @Test func anUpdatedCardAndARekeyShutTheOldIdentityOut() throws {
        let (log, key) = try aliceBobAndCarol()
        let newBob = AccountIdentity(account: "bob", epoch: 2, accountKey: AccountKey.generate())
        var bobs = try verified(log.entries)
        #expect(throws: CryptoError.self) { try bobs.append(try log.updating(try newBob.card(), by: bob, vouching: [])) }
        #expect(throws: CryptoError.self) { try bobs.append(try log.updating(try newBob.card(), by: carol, vouching: [])) }
        #expect(throws: CryptoError.self) { try bobs.append(try log.updating(try newBob.card(), by: mallory, vouching: [])) }
        #expect(throws: CryptoError.self) { try bobs.append(try log.updating(try bob.card(), by: alice, vouching: [])) }
        try bobs.append(try log.updating(try newBob.card(), by: alice, vouching: []))
        let newBobsCard = try newBob.card()
        #expect(bobs.isDueRekey && bobs.members["bob"]?.card == newBobsCard)
        let (rekey, newKey) = try bobs.rekeying(current: key, by: alice)
        try bobs.append(rekey)
        #expect(!bobs.isDueRekey && bobs.epoch == 2)
        #expect(try bobs.keys(for: newBob)[2]?.isSameKey(as: newKey) == true)
        #expect(try bobs.keys(for: newBob)[1]?.isSameKey(as: key) == true)
        #expect(throws: CryptoError.self) { try bobs.keys(for: bob) }

        // Only the owner updates an admin; an admin may update the owner, whose identity moved.
        var (admins, adminKey) = try GroupLog.creating(group: group, by: alice)
        try admins.append(try admins.adding(try bob.card(), role: .admin, key: adminKey, by: alice))
        try admins.append(try admins.adding(try carol.card(), role: .admin, key: adminKey, by: alice))
        #expect(throws: CryptoError.self) { try admins.append(try admins.updating(try newBob.card(), by: carol, vouching: [])) }
        let newAlice = AccountIdentity(account: "alice", epoch: 2, accountKey: AccountKey.generate())
        try admins.append(try admins.updating(try newAlice.card(), by: bob, vouching: []))
        let newAlicesCard = try newAlice.card()
        #expect(admins.members["alice"]?.card == newAlicesCard)
    }

    /// A version of the group's zone signed by `identity`'s account identity, for `epoch`.
    private func version(by identity: AccountIdentity, epoch: UInt32, signedWith key: DeviceSigningKey? = nil) throws -> (ItemEnvelope, ItemBlobContext) {
        let context = ItemBlobContext(
            account: "group", zone: "shared", itemID: ItemID("aXRlbQ"), keyEpoch: epoch, versionVector: VersionVector([DeviceID("d1")!: 1]),
            isDeleted: false)
        let signer = try identity.versionSigner()
        let envelope = try ItemEnvelope(payload: [1, 2, 3], modificationTime: 5, device: DeviceID("d1")!)
            .signed(by: signer.writer, with: key ?? signer.key, context: context)
        return (envelope, context)
    }

    private func refusal(_ log: GroupLog, by identity: AccountIdentity, epoch: UInt32, signedWith key: DeviceSigningKey? = nil) throws -> DeviceLog.WriterRefusal? {
        let (envelope, context) = try version(by: identity, epoch: epoch, signedWith: key)
        return log.refusal(of: envelope, context: context, blob: [])
    }

    /// Writers in the group's zone are the members that write in each key epoch, by their account
    /// identity (decision 0291): a viewer, a removed member after its removal's epoch, a forged
    /// signature and a stranger are refused; a member made a viewer makes the group due a re-key,
    /// which ends its writes.
    @Test func theGroupLogAdmitsTheWritersOfEachEpoch() throws {
        var (log, key) = try aliceBobAndCarol()
        var bobs = try verified(log.entries)
        #expect(try refusal(bobs, by: alice, epoch: 1) == nil)
        #expect(try refusal(bobs, by: bob, epoch: 1) == nil)
        #expect(try refusal(bobs, by: carol, epoch: 1) == .notAMember)
        // The server signing as Bob with a key of its own, and an account the log never named.
        #expect(try refusal(bobs, by: bob, epoch: 1, signedWith: DeviceSigningKey.generate()) == .notAMember)
        #expect(try refusal(bobs, by: mallory, epoch: 1) == .notInTheLog)
        let eve = AccountIdentity(account: "eve", epoch: 1, accountKey: AccountKey.generate())
        #expect(try refusal(bobs, by: eve, epoch: 1) == .notInTheLog)

        // Bob removed: what he wrote in epoch 1 stands only when vouched for (below), nothing of
        // epoch 2 is his to write.
        let removal = try log.removing("bob", current: key, by: alice)
        try log.append(removal.entry)
        try bobs.append(removal.entry)
        #expect(try refusal(bobs, by: bob, epoch: 1) == .revoked)
        #expect(try refusal(bobs, by: bob, epoch: 2) == .notAMember)
        #expect(try refusal(bobs, by: alice, epoch: 2) == nil)
        #expect(try !bobs.stillAdmits(bob.card().writer) && bobs.stillAdmits(alice.card().writer))

        // Carol made a member writes; made a viewer again, she writes until the re-key it calls for.
        try log.append(try log.changingRole(of: "carol", to: .member, by: alice))
        #expect(try refusal(log, by: carol, epoch: 2) == nil)
        #expect(!log.isDueRekey)
        try log.append(try log.changingRole(of: "carol", to: .viewer, by: alice))
        #expect(log.isDueRekey)
        #expect(try refusal(log, by: carol, epoch: 2) == nil)
        try log.append(try log.rekeying(current: removal.key, by: alice).entry)
        #expect(try refusal(log, by: carol, epoch: 3) == .notAMember)
        #expect(try refusal(log, by: alice, epoch: 3) == nil)
    }

    /// A group's keys seal and open as an account's do: a member's device opens what another
    /// member's sealed, every epoch, with the same item IDs.
    @Test func aGroupsKeysSealForEveryMember() throws {
        var (log, key) = try aliceBobAndCarol()
        try log.append(try log.rekeying(current: key, by: alice).entry)
        let alices = try AccountKeys(groupKeys: try log.keys(for: alice))
        let carols = try AccountKeys(groupKeys: try verified(log.entries).keys(for: carol))
        #expect(alices.currentEpoch == 2 && carols.currentEpoch == 2)
        let (envelope, _) = try version(by: alice, epoch: 2)
        let context = ItemBlobContext(
            account: "group", zone: "shared", itemID: ItemID("aXRlbQ"), keyEpoch: 2, versionVector: VersionVector([DeviceID("d1")!: 1]),
            isDeleted: false)
        #expect(try carols.open(try alices.seal(envelope, context: context), context: context) == envelope)
        let fields: [(name: String, value: [UInt8])] = [(name: "service", value: Array("router".utf8))]
        #expect(alices.itemID(zone: "shared", fields: fields) == carols.itemID(zone: "shared", fields: fields))
    }

    /// A removed member still holds the keys of the epochs it wrote in: of what its identity signed
    /// under them, only the blobs its remover vouched for are taken (decision 0293), also once it is
    /// added again.
    @Test func aRemovedMembersVersionsAreTakenOnlyWhenItsRemoverVouchedForThem() throws {
        var (log, key) = try aliceBobAndCarol()
        let (envelope, context) = try version(by: bob, epoch: 1)
        // Stand-ins for two blobs of that version as the server keeps them: the digest is of the blob.
        let earlier = Array("the blob Bob wrote while a member".utf8), later = Array("a blob Bob made after his removal".utf8)
        #expect(log.refusal(of: envelope, context: context, blob: later) == nil)
        let removal = try log.removing("bob", current: key, by: alice, vouching: [DeviceLog.vouchDigest(of: earlier)])
        try log.append(removal.entry)
        let carols = try verified(log.entries)
        #expect(carols.refusal(of: envelope, context: context, blob: earlier) == nil)
        #expect(carols.refusal(of: envelope, context: context, blob: later) == .revoked)
        #expect(try refusal(carols, by: alice, epoch: 1) == nil)

        try log.append(try log.adding(try bob.card(), role: .member, key: removal.key, by: alice))
        let (newer, newerContext) = try version(by: bob, epoch: 2)
        #expect(log.refusal(of: newer, context: newerContext, blob: later) == nil)
        #expect(log.refusal(of: envelope, context: context, blob: later) == .revoked)
    }

    /// A member that leaves answers for its own blobs, and a manager that records a member's new
    /// identity answers for the old one's (decision 0297): anything else the departing card signs
    /// under an epoch up to the entry's is refused, also by a device that verifies the log from
    /// the start. An entry made before, without vouches, restricts nothing.
    @Test func aLeaversAndAnOldIdentitysVersionsAreTakenOnlyWhenTheirEntryVouchedForThem() throws {
        let earlier = Array("a blob written while a member".utf8), later = Array("a blob made after the entry".utf8)
        let (envelope, context) = try version(by: bob, epoch: 1)

        var (log, _) = try aliceBobAndCarol()
        try log.append(try log.leaving(by: bob, vouching: [DeviceLog.vouchDigest(of: earlier)]))
        let alices = try verified(log.entries)
        #expect(alices.refusal(of: envelope, context: context, blob: earlier) == nil)
        #expect(alices.refusal(of: envelope, context: context, blob: later) == .revoked)

        var (updated, _) = try aliceBobAndCarol()
        let newBob = AccountIdentity(account: "bob", epoch: 2, accountKey: AccountKey.generate())
        try updated.append(try updated.updating(try newBob.card(), by: alice, vouching: [DeviceLog.vouchDigest(of: earlier)]))
        let carols = try verified(updated.entries)
        #expect(carols.refusal(of: envelope, context: context, blob: earlier) == nil)
        #expect(carols.refusal(of: envelope, context: context, blob: later) == .revoked)
        let (newer, newerContext) = try version(by: newBob, epoch: 1)
        #expect(carols.refusal(of: newer, context: newerContext, blob: later) == nil)

        // A leave without vouches (as made before 0297) takes what the card signed, as it did.
        var (legacy, _) = try aliceBobAndCarol()
        let identity = try bob.card()
        let entry = GroupLogEntry(
            group: group, index: UInt64(legacy.entries.count), previous: legacy.head, kind: .leave, subject: "bob", subjectCard: [], role: nil,
            epoch: 1, signer: "bob", signerFingerprint: identity.fingerprint, payload: [])
        try legacy.append(try entry.signed(by: bob))
        #expect(try verified(legacy.entries).refusal(of: envelope, context: context, blob: later) == nil)
        // Vouches that do not read are refused with the entry.
        var garbled = try aliceBobAndCarol().0
        var bad = entry
        bad.payload = [0, 0, 0, 2, 1]
        #expect(throws: CryptoError.self) { try garbled.append(try bad.signed(by: bob)) }
    }

    /// More digests than one entry holds go ahead in `vouch` entries by the departure's own signer
    /// (decision 0300): taken with the removal, or the leave, that follows; another signer's are
    /// dropped; a member may vouch ahead only for its own leave, and only so many entries.
    @Test func vouchesAheadOfADepartureAreTakenWithItFromItsSignerOnly() throws {
        let (envelope, context) = try version(by: bob, epoch: 1)
        let blobs = (0..<3).map { Array("blob \($0) Bob wrote while a member".utf8) }
        let later = Array("a blob made after the departure".utf8)

        var (log, key) = try aliceBobAndCarol()
        try log.append(try log.vouching([DeviceLog.vouchDigest(of: blobs[0])], for: "bob", by: alice))
        try log.append(try log.vouching([DeviceLog.vouchDigest(of: blobs[1])], for: "bob", by: alice))
        try log.append(try log.removing("bob", current: key, by: alice, vouching: [DeviceLog.vouchDigest(of: blobs[2])]).entry)
        let carols = try verified(log.entries)
        for blob in blobs { #expect(carols.refusal(of: envelope, context: context, blob: blob) == nil) }
        #expect(carols.refusal(of: envelope, context: context, blob: later) == .revoked)

        // Bob vouches ahead of his own leave; a vouch Alice made ahead of a removal she never made
        // answers for nothing.
        var (leaving, _) = try aliceBobAndCarol()
        try leaving.append(try leaving.vouching([DeviceLog.vouchDigest(of: blobs[1])], for: "bob", by: alice))
        try leaving.append(try leaving.vouching([DeviceLog.vouchDigest(of: blobs[0])], for: "bob", by: bob))
        try leaving.append(try leaving.leaving(by: bob, vouching: []))
        let alices = try verified(leaving.entries)
        #expect(alices.refusal(of: envelope, context: context, blob: blobs[0]) == nil)
        #expect(alices.refusal(of: envelope, context: context, blob: blobs[1]) == .revoked)

        // A member vouching ahead of its own leave adds a bounded number of entries to the log.
        var spammed = try aliceBobAndCarol().0
        for number in 0..<GroupLog.maximumVouchEntriesAhead {
            try spammed.append(try spammed.vouching([DeviceLog.vouchDigest(of: Array("blob \(number)".utf8))], for: "bob", by: bob))
        }
        #expect(throws: CryptoError.self) { try spammed.append(try spammed.vouching([DeviceLog.vouchDigest(of: later)], for: "bob", by: bob)) }

        // Carol, a viewer, may vouch for no one else's departure; nor may Bob for Carol's.
        var (refused, _) = try aliceBobAndCarol()
        #expect(throws: CryptoError.self) { try refused.append(try refused.vouching([DeviceLog.vouchDigest(of: later)], for: "bob", by: carol)) }
        #expect(throws: CryptoError.self) { try refused.append(try refused.vouching([DeviceLog.vouchDigest(of: later)], for: "carol", by: bob)) }
    }
}

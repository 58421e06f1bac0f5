import KeychainCrypto
import SyncClient
import SyncCore
import Testing

/// The seam a group's zone opens its versions through (decision 0291): the sealer over the group's
/// keys, signing as an account identity, with the verified group log as the writers' admission.
@Suite struct GroupWriterTests {
    let group = [UInt8](repeating: 3, count: 16)
    let alice = AccountIdentity(account: "alice", epoch: 1, accountKey: AccountKey.generate())
    let bob = AccountIdentity(account: "bob", epoch: 1, accountKey: AccountKey.generate())
    let carol = AccountIdentity(account: "carol", epoch: 1, accountKey: AccountKey.generate())

    /// A sealer of the group's zone as `identity`'s devices make it.
    func sealer(_ log: GroupLog, as identity: AccountIdentity) throws -> VersionSealer {
        let signer = try identity.versionSigner()
        return VersionSealer(keys: try AccountKeys(groupKeys: try log.keys(for: identity)), account: "group", zone: ZoneID("g.shared"))
            .with(signer: signer.key, as: signer.writer)
    }

    @Test func aMembersVersionOpensForAnotherMemberAndAViewersIsRefused() throws {
        var (log, key) = try GroupLog.creating(group: group, by: alice)
        try log.append(try log.adding(try bob.card(), role: .member, key: key, by: alice))
        try log.append(try log.adding(try carol.card(), role: .viewer, key: key, by: alice))
        let item = ItemID("aXRlbQ"), vector = VersionVector([DeviceID("bobs")!: 1])
        let version = ItemVersion(vector: vector, isDeleted: false, modifiedAt: 1_700_000_000_000, device: DeviceID("bobs")!, content: Array("pw".utf8))

        let byBob = try sealer(log, as: bob).seal(version, item: item)
        let opened = try sealer(log, as: alice).open(byBob, item: item, vector: vector, deleted: false, writers: log)
        #expect(opened.content == Array("pw".utf8))

        // Carol holds the key (she reads) but may not write: what she seals is refused, and so is
        // a version whose vector or deleted flag the server changed.
        let byCarol = try sealer(log, as: carol).seal(version, item: item)
        let alices = try sealer(log, as: alice)
        do {
            _ = try alices.open(byCarol, item: item, vector: vector, deleted: false, writers: log)
            Issue.record("a viewer's version was taken")
        } catch {
            #expect(error.code == .writerNotAdmitted)
        }
        #expect(throws: CryptoError.self) {
            try sealer(log, as: alice).open(byBob, item: item, vector: VersionVector([DeviceID("bobs")!: 2]), deleted: false, writers: log)
        }
    }
}

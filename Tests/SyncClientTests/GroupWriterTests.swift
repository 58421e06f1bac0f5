import Foundation
import KeychainCrypto
import ProcessTesting
import SyncClient
import SyncCore
import SyncProtocol
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

    /// A member's statement of the group's zone naming a later group epoch than the log this device
    /// verified holds its pushes (decision 0294, R30 for groups): the server withholds the log's
    /// latest entry (here a removal) from it. A statement no member signed names nothing.
    @Test func aLaterGroupEpochAMemberStatesIsNoted() async throws {
        var (log, key) = try GroupLog.creating(group: group, by: alice)
        try log.append(try log.adding(try bob.card(), role: .member, key: key, by: alice))
        try log.append(try log.adding(try carol.card(), role: .member, key: key, by: alice))
        let bobsLog = log
        try log.append(try log.removing("carol", current: key, by: alice).entry)
        try await withTemporaryDirectory { directory in
            let database = try ClientStateDatabase(keychainPath: directory.appendingPathComponent("keychain.db").path, create: true)
            let signer = try bob.versionSigner()
            let witness = try ZoneWitness(
                database: database, account: "group", device: DeviceID("bobs")!, signingKey: signer.key,
                keys: try AccountKeys(groupKeys: try bobsLog.keys(for: bob)), group: bobsLog)
            func served(by identity: AccountIdentity) throws -> StatementListResponse {
                let statement = ZoneStatement(
                    account: "group", zone: "g.shared", device: DeviceID("alices")!, epoch: 2, number: 1, previous: ZoneStatement.none,
                    position: 0, digest: ZoneStateDigest(), logHead: log.head)
                let wire = try statement.signed(with: try identity.versionSigner().key)
                return StatementListResponse(statements: [StatementMessage(device: DeviceID("alices")!, statement: Base64Bytes(wire))])
            }
            let stranger = AccountIdentity(account: "alice", epoch: 1, accountKey: AccountKey.generate())
            try witness.noteLaterEpoch(ZoneID("g.shared"), in: try served(by: stranger))
            #expect(try witness.laterEpoch() == nil)
            try witness.noteLaterEpoch(ZoneID("g.shared"), in: try served(by: alice))
            let later = try witness.laterEpoch()
            #expect(later?.device == DeviceID("alices")! && later?.stated == 2 && later?.held == 1 && later?.inGroup == true)
        }
    }
}

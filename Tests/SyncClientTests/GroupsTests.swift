import Foundation
import KeychainCrypto
import ProcessTesting
import Testing

/// Shared groups' membership (decision 0283) with real processes, in the contacts' world: Alice
/// (devices a, and p through the rewriting proxy) and Bob (devices b and c).
extension ContactsTests {
    /// `sync-client group ARGUMENTS…` on `device`.
    func group(_ arguments: [String], on device: TestDevice) async throws -> ChildProcess.Result {
        try await ChildProcess.run(Products.syncClient, ["group", arguments[0], "--keychain", device.keychainPath] + arguments.dropFirst())
    }

    /// Alice and Bob verify each other, Alice creates the group `family` and invites Bob, and Bob's
    /// device accepts it as `alices`.
    func aliceSharesFamilyWithBob(in world: World) async throws {
        #expect(try await add(world.alice, on: world.b, answer: "y").status == 0)
        #expect(try await add(world.bob, on: world.a, answer: "y").status == 0)
        #expect(try await group(["create", "family"], on: world.a).status == 0)
        #expect(try await group(["invite", "family", world.bob], on: world.a).status == 0)
        #expect(try await group(["accept", "--yes", "--name", "alices"], on: world.b).status == 0)
    }

    /// Alice creates a group and adds Bob, whom she verified; Bob's device accepts it, verified
    /// from Alice's pinned card; both accounts' devices list the same members; Alice removes Bob,
    /// whose device then reads the removal but can change nothing. Bob's identity moves when he
    /// revokes a device, and Alice records it (and re-keys) once she verified it again. A server
    /// that makes up an invitation in Bob's name, or rolls the log back, is refused.
    @Test func aGroupsMembershipIsWhatItsOwnerSignedAndTheServerCannotChangeIt() async throws {
        try await withWorld { world in
            #expect(try await add(world.alice, on: world.b, answer: "y").status == 0)
            #expect(try await add(world.bob, on: world.a, answer: "y").status == 0)
            let created = try await group(["create", "family"], on: world.a)
            #expect(created.status == 0 && created.stdout.contains("family: created"), "\(created.stderr)")
            let stranger = try await group(["invite", "family", "carol"], on: world.a)
            #expect(stranger.status != 0 && stranger.stderr.contains("is not a verified contact"), "\(stranger.stderr)")
            let invited = try await group(["invite", "family", world.bob], on: world.a)
            #expect(invited.status == 0, "\(invited.stderr)")

            let accepting = try ChildProcess(Products.syncClient, ["group", "accept", "--keychain", world.b.keychainPath, "--name", "alices"], typing: true)
            try accepting.type("y\n")
            let accepted = try await accepting.waitForExit()
            #expect(accepted.status == 0 && accepted.stdout.contains("alices: accepted"), "\(accepted.stdout) \(accepted.stderr)")
            let bobSees = try await group(["members", "alices"], on: world.b)
            #expect(bobSees.stdout.hasPrefix("key epoch 1: this account holds its key\n"), "\(bobSees.stdout)")
            let members = bobSees.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: "\t").prefix(2).joined(separator: " ") }
            #expect(members == ["\(world.alice) owner", "\(world.bob) member"].sorted(), "\(bobSees.stdout) \(bobSees.stderr)")
            #expect(try await group(["accept"], on: world.b).stdout.contains("no invitations"))

            // Alice's other device knows the group once the account's records synced, and lists the same.
            try await world.a.sync()
            try await world.p.sync()
            let aliceSees = try await group(["members", "family"], on: world.p)
            #expect(aliceSees.status == 0 && aliceSees.stdout == bobSees.stdout, "\(aliceSees.stdout) \(aliceSees.stderr)")

            // A group the server makes up in Bob's name (a key of its own) is not offered to Alice.
            let impostor = AccountIdentity(account: world.bob, epoch: 1, accountKey: AccountKey.generate())
            let forgedID = (0..<16).map { _ in UInt8.random(in: 0...255) }
            var forged = try GroupLog.creating(group: forgedID, by: impostor).log
            let aliceCard = try AccountIdentity(account: world.alice, epoch: 1, accountKey: AccountKey.generate()).card()
            try forged.append(try forged.adding(aliceCard, role: .member, key: GroupKey.generate(), by: impostor))
            try world.proxied.proxy.serveForgedGroup(forgedID, entries: forged.entries)
            let offered = try await group(["accept", "--yes"], on: world.p)
            #expect(offered.status == 0 && offered.stdout.contains("no invitations"), "\(offered.stdout)")
            #expect(offered.stderr.contains("does not verify against a verified contact"), "\(offered.stderr)")

            // Alice's proxied device verified the log's two entries; one served back at one is a rollback.
            try world.proxied.proxy.serveGroupLogs(cutTo: 1)
            let rolledBack = try await group(["members", "family"], on: world.p)
            #expect(rolledBack.status != 0 && rolledBack.stderr.contains("a rollback or a fork"), "\(rolledBack.stderr)")

            // Alice revokes that device: her identity moves on. Bob verifies her again; the group,
            // created by her earlier identity, still verifies from the card Bob first verified it from.
            #expect(try await world.a.syncClient(["revoke", world.p.name]).status == 0)
            #expect(try await contacts("verify", world.alice, on: world.b, answer: "y").status == 0)
            let ownerMoved = try await group(["members", "alices"], on: world.b)
            #expect(ownerMoved.status == 0 && ownerMoved.stdout.contains("\(world.alice)\towner"), "\(ownerMoved.stderr)")

            // Bob's account revokes a device: his identity moves to a new key epoch. Alice verifies
            // it again as a contact and updates the group, which re-keys it for the new identity.
            #expect(try await world.b.syncClient(["revoke", world.c.name]).status == 0)
            let unverified = try await group(["update", "family", world.bob], on: world.a)
            #expect(unverified.status == 0 && unverified.stdout.contains("key epoch 1"), "nothing to update yet: \(unverified.stderr)")
            #expect(try await contacts("verify", world.bob, on: world.a, answer: "y").status == 0)
            let updated = try await group(["update", "family", world.bob], on: world.a)
            #expect(updated.status == 0 && updated.stdout.contains("key epoch 2"), "\(updated.stdout) \(updated.stderr)")
            let rekeyed = try await group(["members", "alices"], on: world.b)
            #expect(rekeyed.stdout.hasPrefix("key epoch 2: this account holds its key"), "\(rekeyed.stdout) \(rekeyed.stderr)")

            // Bob is removed: a new key epoch; his device reads the entry but may change nothing.
            let removed = try await group(["remove", "family", world.bob], on: world.a)
            #expect(removed.status == 0 && removed.stdout.contains("key epoch 3"), "\(removed.stderr)")
            let afterRemoval = try await group(["members", "alices"], on: world.b)
            #expect(afterRemoval.status == 0 && afterRemoval.stdout.contains("does not hold its key\n\(world.alice)\towner"))
            #expect(!afterRemoval.stdout.contains(world.bob), "\(afterRemoval.stdout)")
            #expect(afterRemoval.stderr.contains("no longer a member"), "\(afterRemoval.stderr)")
            let refused = try await group(["leave", "alices"], on: world.b)
            #expect(refused.status != 0 && refused.stderr.contains("no longer a member"), "\(refused.stderr)")

        }
    }
}

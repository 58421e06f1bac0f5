import Foundation
import KeychainCrypto
import ProcessTesting
import Testing

/// Contacts between accounts (decision 0282), with real processes: a server, the rewriting proxy in
/// front of it for one of Alice's devices, and `sync-client` on each device of two accounts.
@Suite(.serialized)
struct ContactsTests {
    /// Alice (devices a, and p through the proxy) and Bob (devices b and c), each account created
    /// by its first device.
    struct World {
        let proxied: ProxiedAccount
        var alice: String { proxied.account }
        let bob: String
        var a: TestDevice { proxied.devices[0] }
        var p: TestDevice { proxied.devices[1] }
        let b: TestDevice
        let c: TestDevice
    }

    func withWorld(_ body: (World) async throws -> Void) async throws {
        try await withProxiedAccount(["a", "p"], proxied: ["p"]) { proxied in
            let bob = "bob-\(UUID().uuidString.prefix(8))"
            let b = proxied.newDevice("b"), c = proxied.newDevice("c")
            for (device, create) in [(b, true), (c, false)] {
                var arguments = ["enroll", "--server", proxied.server.url, "--insecure-http", "--account", bob, "--device-name", device.name, "--kdf-log-n", "15"]
                if create { arguments.append("--create") }
                let enrolled = try await device.syncClient(arguments)
                guard enrolled.status == 0 else { throw TestFailure("enroll \(device.name) failed: \(enrolled.stderr)") }
            }
            try await body(World(proxied: proxied, bob: bob, b: b, c: c))
        }
    }

    /// `sync-client contacts add NAME` on `device`, the person answering `answer` to the code.
    func add(_ name: String, on device: TestDevice, answer: String) async throws -> ChildProcess.Result {
        try await contacts("add", name, on: device, answer: answer)
    }

    /// `sync-client contacts verify NAME`: with no answer typed, a changed card is declined.
    private func check(_ name: String, on device: TestDevice, answer: String = "") async throws -> ChildProcess.Result {
        try await contacts("verify", name, on: device, answer: answer)
    }

    func contacts(_ command: String, _ name: String, on device: TestDevice, answer: String) async throws -> ChildProcess.Result {
        let child = try ChildProcess(Products.syncClient, ["contacts", command, "--keychain", device.keychainPath, name], typing: true)
        try child.type(answer + "\n")
        return try await child.waitForExit()
    }

    private func code(in result: ChildProcess.Result) -> String? {
        result.stdout.split(separator: "\n").first { $0.hasPrefix("safety code with ") }.map { String($0.split(separator: ":").last ?? "") }
    }

    @Test func twoPeopleSeeTheSameSafetyCodeAndEachPinsTheOther() async throws {
        try await withWorld { world in
            let nobody = try await add("nobody-\(UUID().uuidString.prefix(8))", on: world.a, answer: "y")
            #expect(nobody.status != 0 && nobody.stderr.contains("has no identity on the server"), "\(nobody.stderr)")
            // Each account published its identity when it was created: neither has to go first.
            let bobAddsAlice = try await add(world.alice, on: world.b, answer: "y")
            #expect(bobAddsAlice.status == 0, "\(bobAddsAlice.stderr)")
            #expect(bobAddsAlice.stdout.contains("verified and pinned"))
            let aliceAddsBob = try await add(world.bob, on: world.a, answer: "y")
            #expect(aliceAddsBob.status == 0, "\(aliceAddsBob.stderr)")
            let shown = try #require(code(in: aliceAddsBob))
            #expect(shown == code(in: bobAddsAlice))
            #expect(shown.split(separator: " ").count == 12)

            #expect(try await check(world.bob, on: world.a).status == 0)
            let again = try await add(world.bob, on: world.a, answer: "n")
            #expect(again.status == 0 && again.stdout.contains("identity unchanged"), "\(again.stdout)")
            let listed = try await ChildProcess.run(Products.syncClient, ["contacts", "list", "--keychain", world.a.keychainPath])
            #expect(listed.stdout.hasPrefix(world.bob + "\tfingerprint "), "\(listed.stdout)")
            // A code the person does not confirm pins nothing (Alice's other device, not synced since).
            let declined = try await add(world.bob, on: world.p, answer: "n")
            #expect(declined.status != 0 && declined.stderr.contains("not confirmed"), "\(declined.stderr)")
            let unpinned = try await check(world.bob, on: world.p)
            #expect(unpinned.status != 0 && unpinned.stderr.contains("is not a contact yet"), "\(unpinned.stderr)")
            // Pins are the account's: once Bob's devices synced, his other one knows Alice as he verified her.
            try await world.b.sync()
            try await world.c.sync()
            let synced = try await check(world.alice, on: world.c)
            #expect(synced.status == 0 && synced.stdout.contains("the identity you verified"), "\(synced.stderr)")
        }
    }

    /// The server hands Alice's device a key of its own for Bob: the code on her screen is not the
    /// one on Bob's, she declines, and nothing is pinned. Once she has verified Bob's real card, a
    /// substituted one is refused until verified again; a card of another account under Bob's name
    /// does not even read.
    @Test func aKeyTheServerSubstitutesShowsAnotherCodeAndIsRefusedAfterwards() async throws {
        try await withWorld { world in
            let bobAddsAlice = try await add(world.alice, on: world.b, answer: "y")
            let bobsCode = try #require(code(in: bobAddsAlice))
            let substitute = try AccountIdentity(account: world.bob, epoch: 1, accountKey: AccountKey.generate()).card()
            try world.proxied.proxy.serveIdentityCard(substitute.encoded)
            let fooled = try await add(world.bob, on: world.p, answer: "n")
            #expect(fooled.status != 0)
            let shown = try #require(code(in: fooled))
            #expect(shown != bobsCode)
            #expect(try await check(world.bob, on: world.p).status != 0)

            try world.proxied.proxy.serveIdentityCard(nil)
            let real = try await add(world.bob, on: world.p, answer: "y")
            #expect(real.status == 0 && code(in: real) == bobsCode, "\(real.stderr)")

            try world.proxied.proxy.serveIdentityCard(substitute.encoded)
            let refused = try await check(world.bob, on: world.p)
            #expect(refused.status != 0 && refused.stderr.contains("is not the one you verified"), "\(refused.stderr)")
            #expect(refused.stderr.contains("not confirmed"), "\(refused.stderr)")
            let warned = try await add(world.bob, on: world.p, answer: "y")
            #expect(warned.status != 0 && warned.stderr.contains("`sync-client contacts verify"), "add does not re-pin: \(warned.stderr)")
            // Another account's card presented as Bob's: it names that account.
            try world.proxied.proxy.serveIdentityCard(try AccountIdentity(account: "carol", epoch: 1, accountKey: AccountKey.generate()).card().encoded)
            let misnamed = try await check(world.bob, on: world.p)
            #expect(misnamed.status != 0 && misnamed.stderr.contains("does not verify"), "\(misnamed.stderr)")

            try world.proxied.proxy.serveIdentityCard(nil)
            #expect(try await check(world.bob, on: world.p).status == 0, "the card verified before is still pinned")
        }
    }

    /// Bob revokes a device: his account's identity moves to the new epoch, which the revoked
    /// device cannot sign for; Alice's device refuses the new card until she compares the code again.
    @Test func aRevocationGivesTheAccountANewIdentityThatIsVerifiedAgain() async throws {
        try await withWorld { world in
            #expect(try await add(world.alice, on: world.b, answer: "y").status == 0)
            #expect(try await add(world.bob, on: world.a, answer: "y").status == 0)
            let revoked = try await world.b.syncClient(["revoke", world.c.name])
            #expect(revoked.status == 0, "\(revoked.stderr)")
            let changed = try await check(world.bob, on: world.a)
            #expect(changed.status != 0 && changed.stderr.contains("is not the one you verified"), "\(changed.stderr)")
            let again = try await check(world.bob, on: world.a, answer: "y")
            #expect(again.status == 0 && again.stderr.contains("is not the one you verified"), "\(again.stderr)")
            let bobsSide = try await add(world.alice, on: world.b, answer: "n")
            #expect(code(in: again) != nil)
            #expect(bobsSide.stdout.contains("identity unchanged"), "Alice's identity did not move: \(bobsSide.stdout)")
            #expect(try await check(world.bob, on: world.a).status == 0)
        }
    }
}

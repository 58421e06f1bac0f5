import Foundation
import ProcessTesting
import Testing

/// A shared group as a collection on every member's desktop (decision 0296): two desktops of two
/// accounts, Alice's group with Bob in it, one real sync server.
@Suite(.serialized)
struct GroupCollectionTests {
    /// Alice stores a secret in the group's collection with `secret-tool`; Bob's desktop lists the
    /// collection by his name for the group and finds the secret; his store of the same attributes
    /// changes that item, and Alice finds his secret. The collection cannot be deleted or
    /// relabelled over the bus, and its items stay out of Alice's own keychain. Removed, Bob's
    /// desktop shows nothing of the group; added back as a viewer, it shows it and takes no change.
    @Test func aSharedGroupIsACollectionOnEveryMembersDesktop() async throws {
        try await PrivateDesktop.twoAccounts { a, alice, b, bob in
            #expect(try await a.contacts(["add", bob], input: "y\n").status == 0)
            #expect(try await b.contacts(["add", alice], input: "y\n").status == 0)
            #expect(try await a.group(["create", "family"]).status == 0)
            #expect(try await a.group(["invite", "family", bob]).status == 0)
            #expect(try await b.group(["accept", "--yes", "--name", "alices"]).status == 0)
            try await a.sync()
            let keychains = try FileManager.default.contentsOfDirectory(atPath: (a.keychainPath as NSString).deletingLastPathComponent)
            let file = try #require(keychains.first { $0.hasPrefix("keychain.group-") && $0.hasSuffix(".db") }, "\(keychains)")
            let collection = "/org/freedesktop/secrets/collection/group_" + file.dropFirst("keychain.group-".count).dropLast(".db".count)

            let router = ["service", "router.home", "user", "admin"]
            let stored = try await a.secretTool(["store", "--label=Router", "--collection=\(collection)"] + router, input: "first")
            #expect(stored.status == 0, "\(stored.stderr)")
            try await a.sync()
            try await b.sync()
            let label = try await b.call(collection, "org.freedesktop.DBus.Properties.Get", ["org.freedesktop.Secret.Collection", "Label"])
            #expect(label.stdout.contains("'alices'"), "\(label.stdout) \(label.stderr)")
            #expect(try await b.lookup(router) == "first")

            #expect(try await b.secretTool(["store", "--label=Router", "--collection=\(collection)"] + router, input: "second").status == 0)
            try await b.sync()
            try await a.sync()
            #expect(try await a.lookup(router) == "second")
            #expect(try await a.itemIDs(router).count == 1)

            let deleted = try await a.call(collection, "org.freedesktop.Secret.Collection.Delete", [])
            #expect(deleted.status != 0 && deleted.stderr.contains("leaves the group"), "\(deleted.stderr)")
            let relabelled = try await a.call(
                collection, "org.freedesktop.DBus.Properties.Set", ["org.freedesktop.Secret.Collection", "Label", "<'mine'>"])
            #expect(relabelled.status != 0, "\(relabelled.stdout)")
            let own = try await a.run(
                Binaries.keychain.path, ["find-generic-password", "--keychain", a.keychainPath, "--access-group", "org.freedesktop.secrets", "--sync", "any"])
            #expect(own.status != 0, "\(own.stdout)")
            let shared = try await a.run(
                Binaries.keychain.path, ["find-generic-password", "--keychain", a.keychainPath, "--group", "family", "--access-group", "org.freedesktop.secrets", "-w"])
            #expect(shared.stdout == "second\n", "\(shared.stdout) \(shared.stderr)")

            // Removed, Bob's desktop shows nothing of the group once his device learnt it; added
            // back as a viewer, it shows the group again and refuses his changes (decision 0299).
            #expect(try await a.group(["remove", "family", bob]).status == 0)
            try await b.sync()
            try await eventually(timeout: .seconds(20), "the group's secret gone from Bob's desktop") { try await b.lookup(router) == nil }
            #expect(try await a.group(["invite", "family", bob, "--role", "viewer"]).status == 0)
            try await b.sync()
            try await eventually(timeout: .seconds(20), "the group's secret back on Bob's desktop") { try await b.lookup(router) == "second" }
            let refused = try await b.secretTool(["store", "--label=Router", "--collection=\(collection)"] + router, input: "third")
            #expect(refused.status != 0 && refused.stderr.contains("a viewer of the group alices"), "\(refused.stderr)")
        }
    }
}

extension PrivateDesktop {
    /// Starts a server and two desktops, each enrolled in a new account of its own (Alice's and
    /// Bob's), runs `body` with each desktop and its account; everything is stopped afterwards.
    static func twoAccounts<T>(_ body: (PrivateDesktop, String, PrivateDesktop, String) async throws -> T) async throws -> T {
        try await with { a in
            let server = try await TestServer(dataDirectory: a.directory.appendingPathComponent("server"), insecure: true)
            defer { server.stop() }
            return try await with { b in
                let suffix = UUID().uuidString.prefix(8)
                let (alice, bob) = ("alice-\(suffix)", "bob-\(suffix)")
                for (machine, account) in [(a, alice), (b, bob)] {
                    let enrolled = try await machine.run(
                        Binaries.syncClient.path,
                        ["enroll", "--keychain", machine.keychainPath, "--server", server.url, "--insecure-http", "--account", account, "--kdf-log-n", "15", "--create"],
                        environment: syncPassword)
                    try #require(enrolled.status == 0, "\(enrolled.stderr)")
                }
                return try await body(a, alice, b, bob)
            }
        }
    }

    /// `sync-client contacts ARGUMENTS…`, `input` typed.
    func contacts(_ arguments: [String], input: String) async throws -> RunningProcess.Result {
        try await run(Binaries.syncClient.path, ["contacts", arguments[0], "--keychain", keychainPath] + arguments.dropFirst(), input: input)
    }

    /// `sync-client group ARGUMENTS…`.
    func group(_ arguments: [String]) async throws -> RunningProcess.Result {
        try await run(Binaries.syncClient.path, ["group", arguments[0], "--keychain", keychainPath] + arguments.dropFirst())
    }
}

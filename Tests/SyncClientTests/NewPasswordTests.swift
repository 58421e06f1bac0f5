import Foundation
import ProcessTesting
import KeychainModel
import SyncClient
import Testing

/// A new account password (decision 0269): typed twice on a terminal, and the weakest refused by a
/// strength estimate made here (length, the most common passwords, repeated or consecutive
/// characters), wherever the password came from — a prompt, `$SYNC_PASSWORD` or a file.
@Suite("New passwords", .serialized)
struct NewPasswordTests {
    @Test(arguments: [
        ("short", "it has 5 characters; at least 8 are needed"),
        ("password", "one of the most common passwords"),
        ("P@ssw0rd1!", "a common password (\"password\")"),
        ("Monkey2024", "a common password (\"monkey\")"),
        ("aaaaaaaaaaaa", "too easy to guess"),
        ("abcdefghijkl", "too easy to guess"),
        ("98765432109876", "too easy to guess"),
    ])
    func theWeakestAreRefused(password: String, reason: String) {
        let refusal = PasswordStrength(password).refusal
        #expect(refusal?.contains(reason) == true, "\(password): \(refusal ?? "accepted")")
    }

    @Test(arguments: ["correct horse battery staple", "a new password", "Tr0ub4dor&3", "fyxq2k-hbwz8c-pTdmur", "kqmzvbpt"])
    func strongerOnesPass(password: String) {
        #expect(PasswordStrength(password).refusal == nil, "\(password): \(PasswordStrength(password).refusal ?? "")")
    }

    @Test func theAccountNameIsRefusedAsItsPassword() {
        #expect(PasswordStrength("alice-smith-1", account: "Alice-Smith").refusal == "it is the account's name")
    }

    @Test func aWeakPasswordFromTheEnvironmentCreatesNoAccount() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory.appendingPathComponent("server"))
            defer { server.stop() }
            let a = TestDevice(name: "a", in: directory)
            let account = "weak-\(UUID().uuidString.prefix(8))"
            let create = ["enroll", "--server", server.url, "--account", account, "--create", "--kdf-log-n", "15", "--pin", server.pin ?? ""]
            let refused = try await a.syncClient(create, password: "short")
            #expect(refused.status == 1)
            #expect(
                refused.stderr == "sync-client: the new password in $SYNC_PASSWORD is too weak: it has 5 characters; at least 8 are needed; "
                    + "nothing was changed (choose a longer one, or a passphrase of several words; `keychain generate` makes one)\n",
                "\(refused.stderr)")
            let common = try await a.syncClient(create, password: "Password123")
            #expect(common.stderr.contains("is too weak: it is one of the most common passwords"), "\(common.stderr)")
            // Nothing was created: the name is free, and a strong password creates it.
            try await a.enroll(server, account: account, create: true)

            // change-password and recover hold the new password to the same check.
            let change = try await ChildProcess.run(
                Products.syncClient, ["change-password", "--keychain", a.keychainPath],
                environment: ["SYNC_PASSWORD": TestDevice.password, "SYNC_NEW_PASSWORD": "iloveyou"])
            #expect(change.status == 1)
            #expect(change.stderr.contains("the new password in $SYNC_NEW_PASSWORD is too weak"), "\(change.stderr)")
            #expect(try await a.syncClient(["sync"], password: nil).status == 0)
        }
    }

    @Test func onATerminalTheNewPasswordIsTypedTwice() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory.appendingPathComponent("server"))
            defer { server.stop() }
            let a = TestDevice(name: "a", in: directory)
            let account = "typed-\(UUID().uuidString.prefix(8))"
            let create = [
                "enroll", "--keychain", a.keychainPath, "--server", server.url, "--account", account, "--create", "--kdf-log-n", "15",
                "--pin", server.pin ?? "",
            ]
            let differ = try PseudoTerminal.run(
                Products.syncClient, create,
                steps: [.init(expect: "New account password: ", send: "plum orchard lantern\n"), .init(expect: "Retype the new password: ", send: "plum orchard lanterns\n")])
            #expect(differ.status == 1, "\(differ.output)")
            #expect(differ.output.contains("the two passwords typed differ; nothing was changed"), "\(differ.output)")

            let weak = try PseudoTerminal.run(
                Products.syncClient, create,
                steps: [.init(expect: "New account password: ", send: "qwerty123\n"), .init(expect: "Retype the new password: ", send: "qwerty123\n")])
            #expect(weak.status == 1, "\(weak.output)")
            #expect(weak.output.contains("the new password is too weak: it is one of the most common passwords"), "\(weak.output)")

            let created = try PseudoTerminal.run(
                Products.syncClient, create,
                steps: [.init(expect: "New account password: ", send: "plum orchard lantern\n"), .init(expect: "Retype the new password: ", send: "plum orchard lantern\n")])
            #expect(created.status == 0, "\(created.output)")
            #expect(created.output.contains("enrolled device"), "\(created.output)")
            #expect(!created.output.contains("plum"), "the terminal echoed the password: \(created.output)")

            // change-password: the current one once, the new one twice.
            let changed = try PseudoTerminal.run(
                Products.syncClient, ["change-password", "--keychain", a.keychainPath],
                steps: [
                    .init(expect: "Current password: ", send: "plum orchard lantern\n"), .init(expect: "New password: ", send: "velvet comet harbour\n"),
                    .init(expect: "Retype the new password: ", send: "velvet comet harbour\n"),
                ])
            #expect(changed.status == 0, "\(changed.output)")
            #expect(changed.output.contains("password changed"), "\(changed.output)")
            let b = TestDevice(name: "b", in: directory)
            #expect(try await b.syncClient(
                ["enroll", "--server", server.url, "--account", account, "--kdf-log-n", "15", "--pin", server.pin ?? ""],
                password: "velvet comet harbour").status == 0)
        }
    }
}

import Foundation
import ProcessTesting
import KeychainCrypto
import Testing

/// Account recovery (decision 0132): the recovery key printed at `enroll --create` sets a new
/// password from a machine that has never been enrolled; every device keeps working; a wrong key
/// changes nothing.
@Suite("Recovery", .serialized)
struct RecoveryTests {
    @Test func theRecoveryKeySetsANewPasswordAndEveryDeviceKeepsWorking() async throws {
        try await Self.withAccount { directory, server, a, b, account, recoveryKey in
            // A wrong recovery key is refused and changes nothing.
            let fresh = TestDevice(name: "fresh", in: directory)
            let wrongKey = RecoveryKey.generate().printed
            let wrong = try await Self.recover(fresh, server, account: account, key: wrongKey, newPassword: "never used at all")
            #expect(wrong.status != 0)
            #expect(wrong.stderr.contains("did not accept this recovery key"), "\(wrong.stderr)")

            // The password is forgotten: recover from a machine that was never enrolled.
            let recovered = try await Self.recover(fresh, server, account: account, key: recoveryKey, newPassword: "a new password")
            #expect(recovered.status == 0, "\(recovered.stderr)")
            #expect(recovered.stdout.contains("password replaced"))

            // The old password no longer opens the account; the new one enrols a device that gets everything.
            let c = TestDevice(name: "c", in: directory)
            let arguments = ["enroll", "--server", server.url, "--account", account, "--device-name", "c", "--pin", server.pin ?? ""]
            #expect(try await c.syncClient(arguments).status != 0)
            let enrolled = try await c.syncClient(arguments, password: "a new password")
            #expect(enrolled.status == 0, "\(enrolled.stderr)")
            try await c.sync()
            #expect(try await c.password(service: "before", account: "lee") == "kept")

            // The devices enrolled before keep syncing with their tokens.
            try await b.add(service: "after", account: "lee", password: "from b")
            try await b.sync()
            try await a.sync()
            #expect(try await a.password(service: "after", account: "lee") == "from b")

            // The recovery key stays valid, on an enrolled device too (its server and account are the enrolment's).
            let again = try await ChildProcess.run(
                Products.syncClient, ["recover", "--keychain", a.keychainPath, "--recovery-key", recoveryKey],
                environment: ["SYNC_NEW_PASSWORD": "a third password"])
            #expect(again.status == 0, "\(again.stderr)")
        }
    }

    /// A server and an account of two devices, `a` (which made it, and printed `recoveryKey`) and
    /// `b`; `a` has synced an item ("before", "lee": "kept").
    static func withAccount(
        _ body: (_ directory: URL, _ server: TestServer, _ a: TestDevice, _ b: TestDevice, _ account: String, _ recoveryKey: String) async throws -> Void
    ) async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory.appendingPathComponent("server"))
            defer { server.stop() }
            let (a, b) = (TestDevice(name: "a", in: directory), TestDevice(name: "b", in: directory))
            let account = "recover-\(UUID().uuidString.prefix(8))"
            let recoveryKey = try await a.createAccount(server, account: account)
            try await b.enroll(server, account: account)
            try await a.add(service: "before", account: "lee", password: "kept")
            try await a.sync()
            try await body(directory, server, a, b, account, recoveryKey)
        }
    }

    static func recover(
        _ device: TestDevice, _ server: TestServer, account: String, key: String, newPassword: String
    ) async throws -> ChildProcess.Result {
        try await ChildProcess.run(
            Products.syncClient,
            [
                "recover", "--keychain", device.keychainPath, "--server", server.url, "--account", account, "--pin", server.pin ?? "",
                "--recovery-key", key,
            ],
            environment: ["SYNC_NEW_PASSWORD": newPassword])
    }
}

import Foundation
import ProcessTesting
import Testing

/// `sync-client account require-approval` (decision 0134) with real processes: while on, the
/// password alone enrols nothing, a password change does not bring the password wrap back,
/// approval and the recovery key still enrol devices; off, the password enrols again.
@Suite("Require approval", .serialized)
struct RequireApprovalTests {
    @Test func whileApprovalIsRequiredThePasswordAloneEnrolsNothing() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory.appendingPathComponent("server"))
            defer { server.stop() }
            let a = TestDevice(name: "a", in: directory)
            let account = "approval-\(UUID().uuidString.prefix(8))"
            let recoveryKey = try await a.createAccount(server, account: account)
            try await a.add(service: "before", account: "lee", password: "from a")
            try await a.sync()

            let on = try await ChildProcess.run(
                Products.syncClient, ["account", "require-approval", "on", "--keychain", a.keychainPath],
                environment: ["SYNC_PASSWORD": TestDevice.password])
            #expect(on.status == 0, "\(on.stderr)")
            let refused = try await TestDevice(name: "b", in: directory).syncClient(Self.enrolArguments(server, account, "b"))
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("requires approval"), "\(refused.stderr)")

            // A password change keeps the account without a password wrap.
            let change = try await ChildProcess.run(
                Products.syncClient, ["change-password", "--keychain", a.keychainPath],
                environment: ["SYNC_PASSWORD": TestDevice.password, "SYNC_NEW_PASSWORD": "second password"])
            #expect(change.status == 0, "\(change.stderr)")
            let stillRefused = try await TestDevice(name: "c", in: directory).syncClient(
                Self.enrolArguments(server, account, "c"), password: "second password")
            #expect(stillRefused.stderr.contains("requires approval"), "\(stillRefused.stderr)")

            // Approval enrols a device.
            let d = TestDevice(name: "d", in: directory)
            try await ApprovalEnrolmentTests.enrollByApproval(d, approver: a, server, account: account, password: "second password")
            try await d.sync()
            #expect(try await d.password(service: "before", account: "lee") == "from a")

            // With every device lost, the recovery key sets a password and enrols this device.
            let e = TestDevice(name: "e", in: directory)
            let recovered = try await ChildProcess.run(
                Products.syncClient,
                [
                    "recover", "--keychain", e.keychainPath, "--server", server.url, "--account", account, "--pin", server.pin ?? "",
                    "--recovery-key", recoveryKey, "--device-name", "e",
                ],
                environment: ["SYNC_NEW_PASSWORD": "third password"])
            #expect(recovered.status == 0, "\(recovered.stderr)")
            #expect(recovered.stdout.contains("with the recovery key"), "\(recovered.stdout)")
            try await e.sync()
            #expect(try await e.password(service: "before", account: "lee") == "from a")

            // Off again: the password enrols.
            let off = try await ChildProcess.run(
                Products.syncClient, ["account", "require-approval", "off", "--keychain", a.keychainPath],
                environment: ["SYNC_PASSWORD": "third password"])
            #expect(off.status == 0, "\(off.stderr)")
            let f = TestDevice(name: "f", in: directory)
            let enrolled = try await f.syncClient(Self.enrolArguments(server, account, "f"), password: "third password")
            #expect(enrolled.status == 0, "\(enrolled.stderr)")
            try await f.sync()
            #expect(try await f.password(service: "before", account: "lee") == "from a")
        }
    }

    private static func enrolArguments(_ server: TestServer, _ account: String, _ name: String) -> [String] {
        ["enroll", "--server", server.url, "--account", account, "--device-name", name, "--pin", server.pin ?? ""]
    }
}

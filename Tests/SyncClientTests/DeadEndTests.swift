import Foundation
import KeychainModel
import ProcessTesting
import Testing

/// Every dead end has one way out (decision 0269): a revoked device, or a keychain without its
/// account key, is told at each command to run `sync-client enroll --replace`, which enrols the
/// keychain again, its own items kept and pushed; and an enrolment that fails leaves no active
/// device on the server.
@Suite("Dead ends", .serialized)
struct DeadEndTests {
    static let wayOut = "sync-client enroll --replace"

    @Test func aRevokedDeviceIsToldTheWayOutAndReplacingKeepsItsItems() async throws {
        try await withAccount(devices: 2) { server, devices in
            let (a, b) = (devices[0], devices[1])
            try await b.add(service: "synced", account: "lee", password: "before")
            try await b.sync()
            let account = try await KeyEpochTests.accountName(of: b)
            let earlier = try await KeyEpochTests.deviceID(of: b)
            #expect(try await a.syncClient(["revoke", earlier]).status == 0)
            // Written on b after its revocation: only b has it.
            try await b.add(service: "offline", account: "lee", password: "written while revoked")

            for command in [["sync"], ["leave"], ["status"], ["enroll", "--server", server.url, "--account", account, "--pin", server.pin ?? ""]] {
                let refused = try await b.syncClient(command)
                #expect(refused.status != 0, "\(command)")
                #expect(refused.stderr.contains(Self.wayOut), "\(command): \(refused.stderr)")
            }

            let replaced = try await b.syncClient(Self.replace(server, account, name: b.name))
            #expect(replaced.status == 0, "\(replaced.stderr)")
            #expect(replaced.stdout.contains("enrolled device"), "\(replaced.stdout)")
            let now = try await KeyEpochTests.deviceID(of: b)
            #expect(now != earlier)
            // What b's earlier ID wrote before its revocation, and a never pulled, a answered for
            // when it revoked b (decision 0281): it reaches a; what b wrote while revoked goes out
            // under its new ID.
            try await b.sync()
            try await a.sync()
            #expect(try await a.password(service: "offline", account: "lee") == "written while revoked")
            #expect(try await a.password(service: "synced", account: "lee") == "before")
            #expect(try await b.password(service: "synced", account: "lee") == "before")

            let listed = try await a.syncClient(["devices"])
            #expect(listed.status == 0, "\(listed.stderr)")
            let line = try #require(listed.stdout.split(separator: "\n").first { $0.hasPrefix(now) })
            #expect(line.contains("\tactive\tverified"), "\(listed.stdout)")
            #expect(listed.stdout.split(separator: "\n").filter { $0.contains("\tactive\t") }.count == 2, "\(listed.stdout)")
        }
    }

    @Test func aKeychainWithoutItsAccountKeyIsToldTheWayOut() async throws {
        try await withAccount(devices: 2) { server, devices in
            let (a, b) = (devices[0], devices[1])
            try await b.add(service: "kept", account: "lee", password: "mine")
            try await b.sync()
            let account = try await KeyEpochTests.accountName(of: b)
            let earlier = try await KeyEpochTests.deviceID(of: b)
            let removed = try await b.keychain(["delete-generic-password", "--access-group", ItemRules.syncClientAccessGroup, "-a", "account-key"])
            #expect(removed.status == 0, "\(removed.stderr)")

            for command in [["sync"], ["devices"], ["enroll", "--server", server.url, "--account", account, "--pin", server.pin ?? ""]] {
                let refused = try await b.syncClient(command)
                #expect(refused.status != 0, "\(command)")
                #expect(refused.stderr.contains(Self.wayOut), "\(command): \(refused.stderr)")
            }
            let replaced = try await b.syncClient(Self.replace(server, account, name: b.name))
            #expect(replaced.status == 0, "\(replaced.stderr)")
            // Its identity keys were still there: the earlier enrolment revokes itself (decision 0241).
            #expect(replaced.stdout.contains("retired this keychain's earlier enrolment, device \(earlier)"), "\(replaced.stdout)")
            try await b.sync()
            #expect(try await b.password(service: "kept", account: "lee") == "mine")
            try await b.add(service: "after", account: "lee", password: "new")
            try await b.sync()
            try await a.sync()
            #expect(try await a.password(service: "after", account: "lee") == "new")
        }
    }

    @Test func replacingAnEnrolmentThatWorksNeedsTheRightPasswordAndNoDaemon() async throws {
        try await withAccount(devices: 1) { server, devices in
            let a = devices[0]
            let account = try await KeyEpochTests.accountName(of: a)
            let device = try await KeyEpochTests.deviceID(of: a)
            // A wrong password changes nothing: the enrolment still works.
            let wrong = try await a.syncClient(Self.replace(server, account, name: a.name), password: "not the password at all")
            #expect(wrong.status != 0)
            #expect(try await KeyEpochTests.deviceID(of: a) == device)
            try await a.sync()
            // Not under a running daemon.
            let daemon = try await a.startDaemon()
            defer { daemon.stop() }
            let busy = try await a.syncClient(Self.replace(server, account, name: a.name))
            #expect(busy.status != 0)
            #expect(busy.stderr.contains("another sync-client"), "\(busy.stderr)")
        }
    }

    @Test func aFailedEnrolmentLeavesNoActiveDevice() async throws {
        try await withApprovalRequired { a, b, enrol in

            // The password alone, while approval is required.
            let passwordOnly = try await b.syncClient(enrol)
            #expect(passwordOnly.stderr.contains("requires approval"), "\(passwordOnly.stderr)")
            // An approval that times out.
            let timedOut = try await b.syncClient(enrol + ["--request-approval", "--timeout", "1"])
            #expect(timedOut.stderr.contains("no device offered to approve the request in time"), "\(timedOut.stderr)")
            // An approval interrupted while it waits.
            let waiting = try ChildProcess(
                Products.syncClient, [enrol[0], "--keychain", b.keychainPath] + enrol.dropFirst() + ["--request-approval"],
                environment: ["SYNC_PASSWORD": TestDevice.password])
            defer { waiting.stop() }
            try await waiting.waitForOutput(containing: "on an enrolled device")
            waiting.signal(SIGINT)
            let interrupted = try await waiting.waitForExit(timeout: .seconds(30))
            #expect(interrupted.status == 1 && interrupted.stderr.contains("interrupted"), "\(interrupted.stderr)")

            let listed = try await a.syncClient(["devices"])
            #expect(listed.status == 0, "\(listed.stdout)\n\(listed.stderr)")
            #expect(!listed.stdout.contains("\tb\t"), "\(listed.stdout)")
            #expect(!FileManager.default.fileExists(atPath: b.keychainPath + ".sync"))
        }
    }

    /// An enrolment killed after its sign-in (SIGKILL while it waits for approval) leaves a device
    /// the server counts, which nothing could take back; the keychain's next enrolment revokes it,
    /// even one that fails itself (decision 0277).
    @Test func anEnrolmentKilledAfterItsSignInIsWithdrawnByTheNext() async throws {
        try await withApprovalRequired { a, b, enrol in
            let waiting = try ChildProcess(
                Products.syncClient, [enrol[0], "--keychain", b.keychainPath] + enrol.dropFirst() + ["--request-approval"],
                environment: ["SYNC_PASSWORD": TestDevice.password])
            defer { waiting.stop() }
            try await waiting.waitForOutput(containing: "on an enrolled device")
            waiting.signal(SIGKILL)
            _ = try await waiting.waitForExit(timeout: .seconds(30))
            let before = try await a.syncClient(["devices"])
            let killed = before.stdout.split(separator: "\n").first { $0.contains("\tb\tactive\tNOT IN THE DEVICE LOG") }
            #expect(killed != nil, "\(before.stdout)")

            let passwordOnly = try await b.syncClient(enrol)
            #expect(passwordOnly.stderr.contains("requires approval"), "\(passwordOnly.stderr)")
            let after = try await a.syncClient(["devices"])
            #expect(after.status == 0 && !after.stdout.contains("\tb\t"), "\(after.stdout)\n\(after.stderr)")
        }
    }

    /// An account of one device, `a`, that requires approval; a keychain `b` beside it, and the
    /// arguments that enrol `b` with its password.
    func withApprovalRequired(_ body: (_ a: TestDevice, _ b: TestDevice, _ enrol: [String]) async throws -> Void) async throws {
        try await withAccount(devices: 1) { server, devices in
            let a = devices[0]
            let account = try await KeyEpochTests.accountName(of: a)
            let on = try await ChildProcess.run(
                Products.syncClient, ["account", "require-approval", "on", "--keychain", a.keychainPath],
                environment: ["SYNC_PASSWORD": TestDevice.password])
            #expect(on.status == 0, "\(on.stderr)")
            let directory = URL(fileURLWithPath: a.keychainPath).deletingLastPathComponent().deletingLastPathComponent()
            let b = TestDevice(name: "b", in: directory)
            try await body(a, b, ["enroll", "--server", server.url, "--account", account, "--device-name", "b", "--pin", server.pin ?? ""])
        }
    }

    static func replace(_ server: TestServer, _ account: String, name: String) -> [String] {
        ["enroll", "--replace", "--server", server.url, "--account", account, "--device-name", name, "--kdf-log-n", "15", "--pin", server.pin ?? ""]
    }
}

import Foundation
import ProcessTesting
import Testing

/// `sync-client leave` (decision 0135): the device revokes itself, forgets the account and, unless
/// told to keep them, removes the account's items from its keychain; the account keeps them.
@Suite("Leave", .serialized)
struct LeaveTests {
    @Test func aDeviceThatLeavesForgetsTheAccountAndTheAccountKeepsItsItems() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory.appendingPathComponent("server"))
            defer { server.stop() }
            let (a, b, c) = (TestDevice(name: "a", in: directory), TestDevice(name: "b", in: directory), TestDevice(name: "c", in: directory))
            let account = "leave-\(UUID().uuidString.prefix(8))"
            _ = try await a.createAccount(server, account: account)
            try await b.enroll(server, account: account)
            try await c.enroll(server, account: account)
            try await a.add(service: "shared", account: "lee", password: "one")
            try await a.sync()
            try await b.sync()
            try await c.sync()
            #expect(try await b.keychain(["add-generic-password", "-s", "mine", "-a", "lee", "-w", "local"]).status == 0)

            let left = try await b.syncClient(["leave"])
            #expect(left.status == 0, "\(left.stderr)")
            #expect(left.stdout.contains("1 of the account's items removed"), "\(left.stdout)")
            // The account's item is gone from B; B's own local item stays.
            #expect(try await b.password(service: "shared", account: "lee") == nil)
            #expect(try await b.keychain(["find-generic-password", "-s", "mine", "-a", "lee", "-w"]).stdout == "local\n")
            let sync = try await b.syncClient(["sync"])
            #expect(sync.status != 0)
            #expect(sync.stderr.contains("not enrolled"), "\(sync.stderr)")

            // The others keep the item and see B revoked.
            try await a.sync()
            #expect(try await a.password(service: "shared", account: "lee") == "one")
            let devices = try await a.syncClient(["devices"])
            #expect(devices.status == 0, "\(devices.stderr)")
            #expect(devices.stdout.contains("revoked"), "\(devices.stdout)")

            // Leaving while keeping the items; then the same keychain can enrol again as a new device.
            let kept = try await c.syncClient(["leave", "--keep-local"])
            #expect(kept.status == 0, "\(kept.stderr)")
            #expect(try await c.password(service: "shared", account: "lee") == "one")
            try await b.enroll(server, account: account)
            try await b.sync()
            #expect(try await b.password(service: "shared", account: "lee") == "one")
        }
    }

    /// Found by README's walkthrough (ReadmeWalkthroughTests): an item the device had written
    /// itself (journaled, pushed) and `leave` removed came back as a deletion at the keychain's
    /// next enrolment, and every device deleted it.
    @Test func anItemTheDeviceWroteItselfIsNotDeletedWhenItEnrolsAgainAfterLeaving() async throws {
        try await withAccount(devices: 2) { server, devices in
            let (a, b) = (devices[0], devices[1])
            let account = try #require(try await a.syncClient(["status"]).stdout.split(separator: "\n").first?.split(separator: " ").last)
            try await a.add(service: "shared", account: "lee", password: "one")
            try await a.sync()
            try await b.sync()
            try await b.add(service: "shared", account: "lee", password: "two", update: true)
            try await b.sync()
            let left = try await b.syncClient(["leave"])
            #expect(left.status == 0, "\(left.stderr)")

            try await b.enroll(server, account: String(account))
            try await b.sync()
            try await a.sync()
            #expect(try await b.password(service: "shared", account: "lee") == "two")
            #expect(try await a.password(service: "shared", account: "lee") == "two")
        }
    }

    @Test func aDeviceThatIsNotEnrolledCannotLeave() async throws {
        try await withTemporaryDirectory { directory in
            let device = TestDevice(name: "lonely", in: directory)
            let result = try await device.syncClient(["leave"])
            #expect(result.status != 0)
            #expect(result.stderr.contains("not enrolled"), "\(result.stderr)")
        }
    }
}

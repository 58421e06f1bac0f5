import Foundation
import ProcessTesting
import Testing

/// `sync-client revoke` changes the password with the new epoch's wrap (decision 0272): the
/// revoked device's holder may know the current password, which would otherwise sign in and open
/// the new epoch's key through the server's wrap.
@Suite struct RevokePasswordTests {
    static let newPassword = "a different horse, battery and staple"

    @Test func theOldPasswordOpensNothingAfterARevocation() async throws {
        try await withTemporaryDirectory { directory in
            let (server, account, a, b) = try await Self.account(in: directory)
            defer { server.stop() }
            let revoked = try await a.syncClient(["revoke", b.name], newPassword: Self.newPassword)
            #expect(revoked.status == 0, "\(revoked.stderr)")
            #expect(revoked.stdout.contains("password changed: the old one no longer signs in"), "\(revoked.stdout)")
            #expect(revoked.stdout.contains("keeps what it had synced, and its old key opens any item not written since"), "\(revoked.stdout)")
            try await a.add(service: "after", account: "revocation", password: "written under epoch 2")
            try await a.sync()

            // The revoked device's holder, knowing the old password, enrols a fresh keychain: refused.
            let holder = TestDevice(name: "holder", in: directory)
            let refused = try await holder.syncClient(Self.enrolment(server, account: account, name: holder.name))
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("wrong account name or password"), "\(refused.stderr)")

            // A new device with the new password opens the new epoch and reads what was written.
            let c = TestDevice(name: "c", in: directory)
            let enrolled = try await c.syncClient(Self.enrolment(server, account: account, name: c.name), password: Self.newPassword)
            #expect(enrolled.status == 0, "\(enrolled.stderr)")
            try await c.sync()
            #expect(try await c.password(service: "after", account: "revocation") == "written under epoch 2")
            // The device that revoked keeps working, and the new password is the one it is asked for.
            let stale = try await a.syncClient(["change-password"], password: TestDevice.password, newPassword: "yet another horse and staple")
            #expect(stale.status != 0)
            #expect(stale.stderr.contains("the password is not the account's current one"), "\(stale.stderr)")
            #expect(try await a.syncClient(["change-password"], password: Self.newPassword, newPassword: "yet another horse and staple").status == 0)
        }
    }

    @Test func keepingThePasswordSaysWhatTheRevokedHolderCanStillOpen() async throws {
        try await withTemporaryDirectory { directory in
            let (server, account, a, b) = try await Self.account(in: directory)
            defer { server.stop() }
            let revoked = try await a.syncClient(["revoke", b.name])  // the helper adds --keep-password
            #expect(revoked.status == 0, "\(revoked.stderr)")
            #expect(revoked.stderr.contains("warning: the password is unchanged: whoever holds the revoked device"), "\(revoked.stderr)")
            let c = TestDevice(name: "c", in: directory)
            #expect(try await c.syncClient(Self.enrolment(server, account: account, name: c.name)).status == 0)
        }
    }

    @Test func theCurrentPasswordAsTheNewOneIsRefusedAndNothingIsRevoked() async throws {
        try await withTemporaryDirectory { directory in
            let (server, _, a, b) = try await Self.account(in: directory)
            defer { server.stop() }
            let refused = try await a.syncClient(["revoke", b.name], newPassword: TestDevice.password)
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("the new password is the current one; give another, or --keep-password"), "\(refused.stderr)")
            #expect(try await b.syncClient(["sync"]).status == 0)
        }
    }

    private static func account(in directory: URL) async throws -> (TestServer, String, TestDevice, TestDevice) {
        let server = try await TestServer(dataDirectory: directory.appendingPathComponent("server"))
        let account = "revoke-\(UUID().uuidString.prefix(8))"
        let a = TestDevice(name: "a", in: directory)
        let b = TestDevice(name: "b", in: directory)
        try await a.enroll(server, account: account, create: true)
        try await b.enroll(server, account: account)
        return (server, account, a, b)
    }

    private static func enrolment(_ server: TestServer, account: String, name: String) -> [String] {
        ["enroll", "--server", server.url, "--account", account, "--device-name", name, "--kdf-log-n", "15", "--pin", server.pin ?? ""]
    }
}

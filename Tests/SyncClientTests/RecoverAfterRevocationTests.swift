import Foundation
import ProcessTesting
import Testing

/// `recover` after a revocation (decision 0269): the recovery wraps epoch 1's key under the new
/// password, so on an enrolled device `recover` then wraps the newest epoch's key, and new
/// devices enrol with the new password; elsewhere it says what the password opens, and an
/// enrolment that the old epoch's wrap refuses leaves no device behind.
@Suite("Recover after a revocation", .serialized)
struct RecoverAfterRevocationTests {
    @Test func recoverOnAnEnrolledDeviceBringsTheNewPasswordToTheNewestEpoch() async throws {
        try await RecoveryTests.withAccount { directory, server, a, b, account, recoveryKey in
            let revoked = try await a.syncClient(["revoke", b.name])
            #expect(revoked.status == 0, "\(revoked.stderr)")
            #expect(revoked.stdout.contains("key epoch 2"), "\(revoked.stdout)")

            // Elsewhere: the password is set, and the message says what it opens.
            let elsewhere = TestDevice(name: "elsewhere", in: directory)
            let away = try await RecoveryTests.recover(elsewhere, server, account: account, key: recoveryKey, newPassword: "second password")
            #expect(away.status == 0, "\(away.stderr)")
            #expect(away.stdout.contains("unless a device of \(account) was ever revoked"), "\(away.stdout)")
            // As it says: the password opens only epoch 1, and the refused enrolment leaves nothing.
            let c = TestDevice(name: "c", in: directory)
            let refused = try await c.syncClient(Self.enrol(server, account, c.name), password: "second password")
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("opens only the account key of epoch 1"), "\(refused.stderr)")
            let listed = try await a.syncClient(["devices"])
            #expect(listed.status == 0, "\(listed.stdout)\n\(listed.stderr)")
            #expect(!listed.stdout.contains("\tc\t"), "\(listed.stdout)")

            // On the enrolled device: the new password wraps the newest key, and it enrols.
            let here = try await ChildProcess.run(
                Products.syncClient, ["recover", "--keychain", a.keychainPath, "--recovery-key", recoveryKey],
                environment: ["SYNC_NEW_PASSWORD": "third password"])
            #expect(here.status == 0, "\(here.stderr)")
            #expect(here.stdout.contains("new devices enrol with the new password (it wraps the account key of epoch 2"), "\(here.stdout)")
            let d = TestDevice(name: "d", in: directory)
            let enrolled = try await d.syncClient(Self.enrol(server, account, d.name), password: "third password")
            #expect(enrolled.status == 0, "\(enrolled.stderr)")
            try await d.sync()
            #expect(try await d.password(service: "before", account: "lee") == "kept")
        }
    }

    static func enrol(_ server: TestServer, _ account: String, _ name: String) -> [String] {
        ["enroll", "--server", server.url, "--account", account, "--device-name", name, "--kdf-log-n", "15", "--pin", server.pin ?? ""]
    }
}

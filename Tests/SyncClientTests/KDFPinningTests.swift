import Foundation
import ProcessTesting
import GRDB
import Testing

/// KDF pinning (decision 0131): a server that serves a cheaper password derivation than the one
/// this device verified is refused before anything derived from the password leaves the device.
/// The server here is real; it turns malicious by having its stored parameters lowered underneath
/// it, which is exactly what it would serve at pre-sign-in.
@Suite struct KDFPinningTests {
    /// Rewrites the logN of the account's stored KDF parameters in the server's database.
    static func setStoredLogN(_ logN: Int, server: TestServer) throws {
        let queue = try DatabaseQueue(path: server.dataDirectory.appendingPathComponent("sync.sqlite").path)
        try queue.write { db in
            let rows = try Row.fetchAll(db, sql: "SELECT id, kdfParameters FROM account")
            for row in rows {
                let data: Data = row["kdfParameters"]
                var json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
                json["logN"] = logN
                try db.execute(
                    sql: "UPDATE account SET kdfParameters = ? WHERE id = ?",
                    arguments: [try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]), row["id"] as String])
            }
        }
    }

    @Test func aChangeOfPasswordRefusesACheaperDerivationAndSendsNothing() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory.appendingPathComponent("server"))
            defer { server.stop() }
            let a = TestDevice(name: "a", in: directory)
            let account = "pin-\(UUID().uuidString.prefix(8))"
            let created = try await a.syncClient([
                "enroll", "--server", server.url, "--account", account, "--device-name", "a", "--kdf-log-n", "16", "--create",
                "--pin", server.pin ?? "",
            ])
            #expect(created.status == 0, "\(created.stderr)")

            try Self.setStoredLogN(15, server: server)
            let change = try await ChildProcess.run(
                Products.syncClient, ["change-password", "--keychain", a.keychainPath],
                environment: ["SYNC_PASSWORD": TestDevice.password, "SYNC_NEW_PASSWORD": "a new password"])
            #expect(change.status != 0)
            #expect(change.stderr.contains("cheaper password derivation"), "\(change.stderr)")

            // Nothing changed on the server: with its parameters put back, the old password still
            // enrols a new device, and the new one does not.
            try Self.setStoredLogN(16, server: server)
            let b = TestDevice(name: "b", in: directory)
            let arguments = ["enroll", "--server", server.url, "--account", account, "--device-name", "b", "--pin", server.pin ?? ""]
            let refused = try await b.syncClient(arguments, password: "a new password")
            #expect(refused.status != 0)
            let enrolled = try await b.syncClient(arguments)
            #expect(enrolled.status == 0, "\(enrolled.stderr)")
        }
    }

    @Test func thePinOutlivesAPasswordChange() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory.appendingPathComponent("server"))
            defer { server.stop() }
            let a = TestDevice(name: "a", in: directory)
            let created = try await a.syncClient([
                "enroll", "--server", server.url, "--account", "pin-\(UUID().uuidString.prefix(8))", "--device-name", "a",
                "--kdf-log-n", "16", "--create", "--pin", server.pin ?? "",
            ])
            #expect(created.status == 0, "\(created.stderr)")
            let changed = try await ChildProcess.run(
                Products.syncClient, ["change-password", "--keychain", a.keychainPath],
                environment: ["SYNC_PASSWORD": TestDevice.password, "SYNC_NEW_PASSWORD": "second password"])
            #expect(changed.status == 0, "\(changed.stderr)")

            try Self.setStoredLogN(15, server: server)
            let lowered = try await ChildProcess.run(
                Products.syncClient, ["change-password", "--keychain", a.keychainPath],
                environment: ["SYNC_PASSWORD": "second password", "SYNC_NEW_PASSWORD": "third password"])
            #expect(lowered.status != 0)
            #expect(lowered.stderr.contains("cheaper password derivation"), "\(lowered.stderr)")
        }
    }
}

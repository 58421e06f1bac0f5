import Foundation
import ProcessTesting
import KeychainCrypto
import SyncClient
import SyncCore
import SyncProtocol
import Testing

/// The device log (decisions 0120, 0122) as users meet it: `sync-client devices` shows what the
/// log this device verified backs, marks what only the server says, and notices a log the server
/// rolled back; `revoke` signs the revocation in.
@Suite("Device log", .serialized)
struct DeviceLogTests {
    @Test func enrolledDevicesAreVerifiedAndARevocationIsSignedIntoTheLog() async throws {
        try await withAccount(devices: 3) { _, devices in
            let (a, b, c) = (devices[0], devices[1], devices[2])
            let listed = try await a.syncClient(["devices"])
            #expect(listed.status == 0, "\(listed.stderr)")
            let lines = listed.stdout.split(separator: "\n")
            #expect(lines.count == 3)
            #expect(lines.allSatisfy { $0.contains("\tactive\tverified") }, "\(listed.stdout)")

            let bID = try await Self.deviceID(of: b)
            #expect(try await a.syncClient(["revoke", bID]).status == 0)
            // Another device reads the revocation from the log, signed by a.
            let seen = try await c.syncClient(["devices"])
            #expect(seen.status == 0, "\(seen.stderr)")
            let bLine = try #require(seen.stdout.split(separator: "\n").first { $0.hasPrefix(bID) })
            #expect(bLine.hasSuffix("\trevoked\trevoked in the device log"))
            // The revoked device never signs in again with its ID.
            #expect(try await b.syncClient(["sync"]).status != 0)
        }
    }

    @Test func aDeviceTheServerListsButNoDeviceAddedIsMarkedAndFailsTheCommand() async throws {
        try await withAccount(devices: 1) { server, devices in
            let a = devices[0]
            // Someone with the password signs a device in without entering it in the log: the
            // server lists it, and no device of the account vouches for it.
            try await Self.signInWithoutTheLog(server, account: try await Self.accountName(of: a), name: "ghost")
            let listed = try await a.syncClient(["devices"])
            #expect(listed.status != 0)
            let ghost = try #require(listed.stdout.split(separator: "\n").first { $0.contains("\tghost\t") })
            #expect(ghost.contains("NOT IN THE DEVICE LOG"))
            #expect(listed.stderr.contains("the device log does not back"))
        }
    }

    @Test func aLogTheServerRolledBackIsReportedAndNotRecorded() async throws {
        try await withTemporaryDirectory { directory in
            let dataDirectory = directory.appendingPathComponent("server")
            var server = try await TestServer(dataDirectory: dataDirectory)
            defer { server.stop() }
            let (a, b) = (TestDevice(name: "a", in: directory), TestDevice(name: "b", in: directory))
            let account = "log-\(UUID().uuidString.prefix(8))"
            try await a.enroll(server, account: account, create: true)
            let backupFile = directory.appendingPathComponent("backup.sqlite")
            let backup = try await ChildProcess.run(Products.syncServer, ["backup", backupFile.path, "--data-dir", dataDirectory.path])
            #expect(backup.status == 0, "\(backup.stderr)")
            try await b.enroll(server, account: account)
            #expect(try await a.syncClient(["devices"]).status == 0)

            // The server goes back to before b joined.
            let port = server.port
            server.stop()
            try await eventually("the server to stop") { !server.isRunning }
            let restore = try await ChildProcess.run(Products.syncServer, ["restore", backupFile.path, "--data-dir", dataDirectory.path])
            #expect(restore.status == 0, "\(restore.stderr)")
            server = try await TestServer(dataDirectory: dataDirectory, port: port)

            for _ in 0..<2 {
                let listed = try await a.syncClient(["devices"])
                #expect(listed.status != 0)
                // a's entry, the recovery key's (decision 0178), b's entry.
                #expect(listed.stderr.contains("does not extend the 3 this device verified"), "\(listed.stderr)")
            }
        }
    }

    private static func status(of device: TestDevice) async throws -> [String: Any] {
        let status = try await device.syncClient(["status", "--json"])
        return try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
    }

    private static func deviceID(of device: TestDevice) async throws -> String {
        try #require(try await status(of: device)["device"] as? String)
    }

    private static func accountName(of device: TestDevice) async throws -> String {
        try #require(try await status(of: device)["account"] as? String)
    }

    /// Signs a new device ID in over the server's API with the account's password, as any holder
    /// of the password can, without touching the device log.
    private static func signInWithoutTheLog(_ server: TestServer, account: String, name: String) async throws {
        let endpoint = try ServerEndpoint(server.url, allowInsecure: false)
        let (_, tls) = try await endpoint.verify(pin: server.pin.flatMap(ServerPin.init))
        let connection = ServerConnection(endpoint: endpoint, tls: tls, token: nil)
        do {
            let pre = try await connection.send(
                .POST, "/v1/sign-in/parameters", body: PreSignInRequest(account: account), as: PreSignInResponse.self)
            let secrets = try AccountSecrets.derive(
                password: TestDevice.password, parameters: try DeviceEnrolment.parameters(pre.kdf, salt: pre.salt))
            _ = try await connection.send(
                .POST, "/v1/sign-in",
                body: SignInRequest(account: account, authKey: Base64Bytes(secrets.authKey), device: DeviceID.random(), deviceName: name),
                as: SignInResponse.self)
            await connection.shutdown()
        } catch {
            await connection.shutdown()
            throw error
        }
    }
}

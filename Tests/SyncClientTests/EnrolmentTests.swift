import Foundation
import ProcessTesting
import Testing

@Suite(.serialized)
struct EnrolmentTests {
    @Test func firstEnrolmentWithoutAPinTrustsAndRecordsTheServersKey() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory.appendingPathComponent("server"))
            defer { server.stop() }
            let device = TestDevice(name: "a", in: directory)
            let result = try await device.syncClient([
                "enroll", "--server", server.url, "--account", "joe", "--create", "--kdf-log-n", "15",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("server pin: \(server.pin ?? "?")"))
            #expect(result.stdout.contains("recovery key"))
            let status = try await device.syncClient(["status", "--json"])
            #expect(status.stdout.contains(server.pin ?? "?"))
            #expect(try await device.syncClient(["sync"]).status == 0)
        }
    }

    @Test func aWrongPinIsRefused() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory.appendingPathComponent("server"))
            defer { server.stop() }
            let device = TestDevice(name: "a", in: directory)
            let wrong = "sha256/" + Data(repeating: 7, count: 32).base64EncodedString()
            let result = try await device.syncClient([
                "enroll", "--server", server.url, "--account", "kim", "--create", "--kdf-log-n", "15", "--pin", wrong,
            ])
            #expect(result.status != 0)
            #expect(result.stderr.contains("does not match the pin"))
            #expect(!FileManager.default.fileExists(atPath: device.keychainPath + ".sync"))
        }
    }

    @Test func aWrongPasswordFailsClearlyAndChangesNothing() async throws {
        try await withAccount(devices: 1) { server, devices in
            let status = try await devices[0].syncClient(["status", "--json"])
            let account = try #require(
                (try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["account"] as? String)
            let other = TestDevice(name: "other", in: URL(fileURLWithPath: devices[0].keychainPath).deletingLastPathComponent())
            let result = try await other.syncClient(
                ["enroll", "--server", server.url, "--account", account, "--pin", server.pin ?? ""], password: "wrong password")
            #expect(result.status != 0)
            #expect(result.stderr.contains("wrong account name or password"))
            #expect(!FileManager.default.fileExists(atPath: other.keychainPath + ".sync"))
            #expect(try await devices[0].syncClient(["sync"]).status == 0)
        }
    }

    @Test func changingThePasswordKeepsOtherDevicesWorking() async throws {
        try await withAccount(devices: 2) { server, devices in
            let (a, b) = (devices[0], devices[1])
            var environment = ["SYNC_PASSWORD": TestDevice.password, "SYNC_NEW_PASSWORD": "a new password"]
            let change = try await ChildProcess.run(
                Products.syncClient, ["change-password", "--keychain", a.keychainPath], environment: environment)
            #expect(change.status == 0, "\(change.stderr)")
            try await a.add(service: "after", account: "lee", password: "z")
            try await a.sync()
            try await b.sync()
            #expect(try await b.password(service: "after", account: "lee") == "z")
            let status = try await a.syncClient(["status", "--json"])
            let account = try #require(
                (try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["account"] as? String)
            let c = TestDevice(name: "c", in: URL(fileURLWithPath: a.keychainPath).deletingLastPathComponent())
            environment["SYNC_PASSWORD"] = "a new password"
            let enrol = try await c.syncClient(
                ["enroll", "--server", server.url, "--account", account, "--pin", server.pin ?? ""], password: "a new password")
            #expect(enrol.status == 0, "\(enrol.stderr)")
        }
    }

    @Test func aRevokedDeviceIsRefused() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            let status = try await b.syncClient(["status", "--json"])
            let device = try #require(
                (try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["device"] as? String)
            let listed = try await a.syncClient(["devices"])
            #expect(listed.stdout.contains(device))
            #expect(try await a.syncClient(["revoke", device]).status == 0)
            let refused = try await b.syncClient(["sync"])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("no longer accepts this device"))
        }
    }
}

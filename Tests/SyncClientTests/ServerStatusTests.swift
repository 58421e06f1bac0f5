import Foundation
import ProcessTesting
import Testing

/// `sync-client status` asks the server once and exits 1, saying why, when the server is
/// unreachable, the device revoked or the account disabled (design §7); the daemon says once when
/// the server goes away and once when it is back (decision 0261). Real processes throughout.
@Suite struct ServerStatusTests {
    static func json(_ result: ChildProcess.Result) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    static func connectionState(_ result: ChildProcess.Result) throws -> String? {
        (try json(result)["connection"] as? [String: Any])?["state"] as? String
    }

    static func occurrences(of text: String, in output: String) -> Int {
        output.components(separatedBy: text).count - 1
    }

    @Test func statusAndTheDaemonSayWhenTheServerGoesAwayAndWhenItIsBack() async throws {
        try await withTemporaryDirectory { directory in
            let dataDirectory = directory.appendingPathComponent("server")
            var server = try await TestServer(dataDirectory: dataDirectory)
            defer { server.stop() }
            let device = TestDevice(name: "a", in: directory)
            try await device.enroll(server, account: "status-\(UUID().uuidString.prefix(8))", create: true)
            let up = try await device.syncClient(["status"])
            #expect(up.status == 0, "\(up.stderr)")
            #expect(up.stdout.contains("connection:      ok"), "\(up.stdout)")
            #expect(try Self.connectionState(try await device.syncClient(["status", "--json"])) == "ok")

            let daemon = try ChildProcess(Products.syncClient, ["run", "--keychain", device.keychainPath], environment: ["LOG_LEVEL": "debug"])
            defer { daemon.stop() }
            try await daemon.waitForOutput(containing: "running for device")
            try await eventually("the push channel") { daemon.stderr.contains("push channel open") }

            let port = server.port
            try await server.kill9()
            let unreachable = "server unreachable; retrying until it answers"
            try await eventually("the daemon to say the server is away") { daemon.stderr.contains(unreachable) }
            let down = try await device.syncClient(["status"])
            #expect(down.status == 1)
            #expect(down.stderr.hasPrefix("sync-client: the server is unreachable"), "\(down.stderr)")
            #expect(down.stderr.split(separator: "\n").count == 1)
            #expect(down.stdout.contains("connection:      UNREACHABLE"), "\(down.stdout)")
            #expect(try Self.connectionState(try await device.syncClient(["status", "--json"])) == "unreachable")

            // A write while the server is away: retried, and not said again.
            try await device.add(service: "while-away", account: "ann", password: "p")
            try await eventually("the daemon to retry") {
                Self.occurrences(of: "server still not answering; retrying", in: daemon.stderr) >= 2
            }
            server = try await TestServer(dataDirectory: dataDirectory, port: port)
            try await eventually(timeout: .seconds(120), "the daemon to say the server is back") {
                daemon.stderr.contains("server reachable again")
            }
            #expect(Self.occurrences(of: unreachable, in: daemon.stderr) == 1, "\(daemon.stderr)")
            #expect(Self.occurrences(of: "server reachable again", in: daemon.stderr) == 1)
            try await eventually("the write to be pushed") {
                try await device.syncClient(["status"]).stdout.contains("pending changes: 0")
            }
            let back = try await device.syncClient(["status"])
            #expect(back.status == 0, "\(back.stderr)")
        }
    }

    @Test func aRevokedDeviceSaysSo() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            let id = try #require(try Self.json(try await b.syncClient(["status", "--json"]))["device"] as? String)
            let revoked = try await a.syncClient(["revoke", id])
            #expect(revoked.status == 0, "\(revoked.stderr)")
            let status = try await b.syncClient(["status"])
            #expect(status.status == 1)
            #expect(status.stderr.contains("no longer accepts this device: it was revoked"), "\(status.stderr)")
            #expect(status.stdout.contains("connection:      REVOKED"), "\(status.stdout)")
            #expect(try Self.connectionState(try await b.syncClient(["status", "--json"])) == "revoked")
            #expect(try await a.syncClient(["status"]).status == 0)
        }
    }

    @Test func aDisabledAccountSaysSoUntilEnabledAgain() async throws {
        try await withAccount(devices: 1) { server, devices in
            let device = devices[0]
            let account = try #require(try Self.json(try await device.syncClient(["status", "--json"]))["account"] as? String)
            let disable = try await ChildProcess.run(Products.syncServer, ["admin", "disable", account, "--data-dir", server.dataDirectory.path])
            #expect(disable.status == 0, "\(disable.stderr)")
            let status = try await device.syncClient(["status"])
            #expect(status.status == 1)
            #expect(status.stderr.contains("the account is disabled by the server's operator"), "\(status.stderr)")
            #expect(try Self.connectionState(try await device.syncClient(["status", "--json"])) == "disabled")
            let enable = try await ChildProcess.run(Products.syncServer, ["admin", "enable", account, "--data-dir", server.dataDirectory.path])
            #expect(enable.status == 0, "\(enable.stderr)")
            #expect(try await device.syncClient(["status"]).status == 0)
        }
    }
}

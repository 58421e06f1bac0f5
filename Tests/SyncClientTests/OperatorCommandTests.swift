import Foundation
import ProcessTesting
import Testing

/// `sync-server admin`, `backup` and `restore` as an operator runs them, beside a running server and
/// real devices (decisions 0152 and 0153).
@Suite(.serialized)
struct OperatorCommandTests {
    static func serverCommand(_ arguments: [String], _ server: TestServer) async throws -> ChildProcess.Result {
        try await ChildProcess.run(Products.syncServer, arguments + ["--data-dir", server.dataDirectory.path])
    }

    static func accountName(of device: TestDevice) async throws -> String {
        let status = try await device.syncClient(["status", "--json"])
        return try #require((try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["account"] as? String)
    }

    @Test func adminListsAccountsAndDevicesAndADisabledAccountStopsAtOnce() async throws {
        try await withAccount(devices: 2) { server, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.add(service: "admin.example", account: "ada", password: "one")
            try await a.sync()
            let account = try await Self.accountName(of: a)

            let accounts = try await Self.serverCommand(["admin", "accounts"], server)
            #expect(accounts.status == 0, "\(accounts.stderr)")
            let row = try #require(accounts.stdout.split(separator: "\n").first { $0.hasPrefix(account + "\t") })
            let fields = row.split(separator: "\t").map(String.init)
            #expect(fields[1] == "2")
            #expect(Int(fields[2]).map { $0 >= 1 } == true)
            #expect(Int(fields[3]).map { $0 > 0 } == true)
            #expect(fields[5] == "active")
            let listed = try await Self.serverCommand(["admin", "devices", account], server)
            #expect(listed.stdout.contains("\ta\t") || listed.stdout.contains("device0"), "\(listed.stdout)")
            #expect(listed.stdout.split(separator: "\n").count == 3)

            #expect(try await Self.serverCommand(["admin", "disable", account], server).status == 0)
            let refused = try await b.syncClient(["sync"])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("disabled"), "\(refused.stderr)")
            let disabledRow = try await Self.serverCommand(["admin", "accounts"], server).stdout
            #expect(disabledRow.contains("\tdisabled"))

            #expect(try await Self.serverCommand(["admin", "enable", account], server).status == 0)
            try await b.sync()
            #expect(try await b.password(service: "admin.example", account: "ada") == "one")
            let unknown = try await Self.serverCommand(["admin", "disable", "nobody-here"], server)
            #expect(unknown.status != 0)
        }
    }

    @Test func aBackupTakenWhileWritingRestoresConsistentlyAndWritesAfterTheRestoreReachEveryDevice() async throws {
        try await withTemporaryDirectory { directory in
            let dataDirectory = directory.appendingPathComponent("server")
            var server = try await TestServer(dataDirectory: dataDirectory)
            defer { server.stop() }
            let (a, b) = (TestDevice(name: "a", in: directory), TestDevice(name: "b", in: directory))
            let account = "backup-\(UUID().uuidString.prefix(8))"
            try await a.enroll(server, account: account, create: true)
            try await b.enroll(server, account: account)
            for index in 0..<30 { try await a.add(service: "before\(index)", account: "bo", password: "b\(index)") }
            try await a.sync()
            // The backup runs while b uploads more.
            for index in 0..<30 { try await b.add(service: "during\(index)", account: "bo", password: "d\(index)") }
            let writing = try ChildProcess(Products.syncClient, ["sync", "--keychain", b.keychainPath])
            let backupFile = directory.appendingPathComponent("backup.sqlite")
            let backup = try await Self.serverCommand(["backup", backupFile.path], server)
            #expect(backup.status == 0, "\(backup.stderr)")
            #expect(try await writing.waitForExit().status == 0)
            let mode = try FileManager.default.attributesOfItem(atPath: backupFile.path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            // Written after the backup: the restore loses these on the server.
            for index in 0..<10 { try await b.add(service: "after\(index)", account: "bo", password: "a\(index)") }
            try await b.sync()
            try await a.sync()

            // Roll the server back to the backup.
            let port = server.port
            server.stop()
            try await eventually("the server to stop") { !server.isRunning }
            let restore = try await ChildProcess.run(
                Products.syncServer, ["restore", backupFile.path, "--data-dir", dataDirectory.path])
            #expect(restore.status == 0, "\(restore.stderr)")
            server = try await TestServer(dataDirectory: dataDirectory, port: port)

            // The backup is consistent: everything synced before it is there, for a new device.
            let c = TestDevice(name: "c", in: directory)
            try await c.enroll(server, account: account)
            try await c.sync()
            for index in [0, 17, 29] { #expect(try await c.password(service: "before\(index)", account: "bo") == "b\(index)") }
            // The batch that ran during the backup is in it whole or not at all.
            let during = try await c.keychain(["dump-keychain", "--json"]).stdout
            let seen = (0..<30).filter { during.contains("\"during\($0)\"") }.count
            #expect(seen == 0 || seen == 30, "\(seen) of the batch")

            // Writes after the restore reach devices whose cursors were ahead of the restored feed.
            try await c.add(service: "restored", account: "bo", password: "r")
            try await c.sync()
            try await a.sync()
            try await b.sync()
            #expect(try await a.password(service: "restored", account: "bo") == "r")
            #expect(try await b.password(service: "restored", account: "bo") == "r")
            // Nothing was lost on the devices.
            #expect(try await b.password(service: "after9", account: "bo") == "a9")
            #expect(try await a.password(service: "after9", account: "bo") == "a9")

            // What the server lost (the items written after the backup) comes back from the devices
            // (decision 0154): their cursors are ahead of where the backup ended, so they resync and
            // give it back; a new device then has everything.
            try await b.sync()
            try await a.sync()
            let d = TestDevice(name: "d", in: directory)
            try await d.enroll(server, account: account)
            try await d.sync()
            for index in 0..<10 { #expect(try await d.password(service: "after\(index)", account: "bo") == "a\(index)") }
            for index in [0, 29] { #expect(try await d.password(service: "during\(index)", account: "bo") == "d\(index)") }
            #expect(try await d.password(service: "restored", account: "bo") == "r")
            // Nothing is reported: what was given back is in step everywhere.
            let status = try await b.syncClient(["status"])
            #expect(!status.stdout.contains("no longer lists"), "\(status.stdout)")
        }
    }
}

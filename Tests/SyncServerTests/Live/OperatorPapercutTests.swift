import Foundation
import ProcessTesting
import SyncServer
import Testing

/// What an operator meets running the built `sync-server` (decision 0262): a port in use, a
/// forgotten `--data-dir`, a backup onto an existing file, a restore under a running server, and
/// request log lines that say how each request was answered.
@Suite("sync-server operator papercuts", .serialized)
struct OperatorPapercutTests {
    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> ChildProcess.Result {
        try await ChildProcess.run(TestServer.binary, arguments, environment: environment)
    }

    @Test func aPortInUseIsSaidPlainlyBeforeAnyPin() async throws {
        try await withTemporaryDirectory { directory in
            let first = try await TestServer(dataDirectory: directory.appendingPathComponent("first"))
            defer { first.stop() }
            let second = try await Self.run([
                "--host", "127.0.0.1", "--port", "\(first.port)", "--data-dir", directory.appendingPathComponent("second").path,
            ])
            #expect(second.status == 1, "\(second.stdout)\(second.stderr)")
            #expect(!second.stdout.contains("pin"), "\(second.stdout)")
            #expect(!second.stdout.contains("listening"))
            let line = try #require(second.stderr.split(separator: "\n").last.map(String.init))
            #expect(line.hasPrefix("sync-server: port \(first.port) on 127.0.0.1 is in use"), "\(second.stderr)")
            #expect(!second.stderr.contains("error"), "\(second.stderr)")
            #expect(!second.stderr.contains("bind("), "\(second.stderr)")
            #expect(first.isRunning)
        }
    }

    @Test func adminWithoutItsStorageCreatesNothing() async throws {
        try await withTemporaryDirectory { directory in
            // In a directory without ./sync-data, as an operator who forgot --data-dir.
            let admin = try await ChildProcess.run(
                URL(fileURLWithPath: "/bin/sh"), ["-c", "cd \"$1\" && exec \"$0\" admin accounts", TestServer.binary.path, directory.path])
            #expect(admin.status == 1, "\(admin.stderr)")
            #expect(admin.stderr.hasPrefix("sync-server: no ./sync-data here"), "\(admin.stderr)")
            #expect(admin.stderr.contains("--data-dir"))
            #expect(admin.stderr.split(separator: "\n").count == 1)
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("sync-data").path))
            let mistyped = directory.appendingPathComponent("typo")
            let disable = try await Self.run(["admin", "disable", "someone", "--data-dir", mistyped.path])
            #expect(disable.status == 1)
            #expect(disable.stderr.contains("no sync-server database in \(mistyped.path)"), "\(disable.stderr)")
            #expect(!FileManager.default.fileExists(atPath: mistyped.path))
        }
    }

    @Test func aBackupNeverWritesOverAFile() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory.appendingPathComponent("data"))
            defer { server.stop() }
            let existing = directory.appendingPathComponent("backup.sqlite")
            try Data("an earlier backup".utf8).write(to: existing)
            let backup = try await Self.run(["backup", existing.path, "--data-dir", server.dataDirectory.path])
            #expect(backup.status == 1)
            #expect(backup.stderr == "sync-server: \(existing.path) exists already; a backup goes to a new file: choose another name (nothing was written)\n")
            #expect(try Data(contentsOf: existing) == Data("an earlier backup".utf8))
            let fresh = directory.appendingPathComponent("fresh.sqlite")
            let made = try await Self.run(["backup", fresh.path, "--data-dir", server.dataDirectory.path])
            #expect(made.status == 0, "\(made.stderr)")
        }
    }

    @Test func aRestoreRefusesWhileAServerServesTheDirectory() async throws {
        try await withTemporaryDirectory { directory in
            let data = directory.appendingPathComponent("data")
            let server = try await TestServer(dataDirectory: data)
            defer { server.stop() }
            let file = directory.appendingPathComponent("backup.sqlite")
            #expect(try await Self.run(["backup", file.path, "--data-dir", data.path]).status == 0)
            let refused = try await Self.run(["restore", file.path, "--data-dir", data.path])
            #expect(refused.status == 1)
            #expect(refused.stderr.hasPrefix("sync-server: a sync-server is serving \(data.path)"), "\(refused.stderr)")
            #expect(server.isRunning)
            server.signal(SIGTERM)
            #expect(await server.waitForExit() == 0)
            let restored = try await Self.run(["restore", file.path, "--data-dir", data.path])
            #expect(restored.status == 0, "\(restored.stderr)")
            #expect(restored.stdout.hasPrefix("restored "))
        }
    }

    @Test func requestLogLinesCarryTheStatusCode() async throws {
        try await withTemporaryDirectory { directory in
            let server = try ChildProcess(
                TestServer.binary, ["--host", "127.0.0.1", "--port", "0", "--data-dir", directory.path, "--insecure-http"],
                environment: ["LOG_LEVEL": "info"])
            defer { server.stop() }
            try await server.waitForOutput(containing: "sync-server: listening on ")
            let url = try #require(server.stdout.split(separator: "\n").first { $0.contains("listening on") }?.split(separator: " ").last)
            let port = try #require(url.split(separator: ":").last.flatMap { Int($0) })
            #expect(try await RawHTTPConnection.request(port: port, pin: nil, method: "GET", path: "/health").status == 200)
            #expect(try await RawHTTPConnection.request(port: port, pin: nil, method: "GET", path: "/no-such-route?token=x").status == 404)
            #expect(try await RawHTTPConnection.request(port: port, pin: nil, method: "GET", path: "/v1/devices").status == 401)
            try await eventually("the request log lines") {
                server.stderr.split(separator: "\n").filter { $0.contains("request") && $0.contains("status=") }.count >= 3
            }
            let lines = server.stderr.split(separator: "\n").map(String.init)
            #expect(lines.contains { $0.contains("path=/health") && $0.contains("status=200") }, "\(server.stderr)")
            #expect(lines.contains { $0.contains("path=/no-such-route") && $0.contains("status=404") })
            #expect(lines.contains { $0.contains("path=/v1/devices") && $0.contains("status=401") })
            #expect(!server.stderr.contains("token=x"))
        }
    }
}

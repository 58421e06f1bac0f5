import Foundation
import ProcessTesting
import Testing

/// Devices silent past the inactivity limit come back after the server collected tombstones they
/// never saw, and converge with the others (rule R10a of docs/sync-rules.md): an unchanged copy
/// the account deleted is removed on the collected tombstone the server kept, which it cannot
/// forge; their own offline edits survive; nothing deleted comes back anywhere; and two devices
/// back together report no fork of each other.
@Suite(.serialized)
struct HorizonConvergenceTests {
    /// A and the server's collection run well within the limit even on a loaded machine (a device
    /// of the test silent past it by accident would be one more device back past the horizon).
    static let serverOptions = ["--device-inactivity-limit", "30s", "--tombstone-collection-interval", "1s"]

    @Test func twoDevicesBackPastTheHorizonConverge() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory.appendingPathComponent("server"), options: Self.serverOptions)
            defer { server.stop() }
            try await Self.twoDevicesComeBack(servers: [server, server], in: directory)
        }
    }

    @Test func twoDevicesBackPastTheHorizonConvergeOnTwoProcessesSharingPostgreSQL() async throws {
        try await withTemporaryDirectory { directory in
            try await withPostgresDatabase { database in
                // Each process keeps its own certificate in its data directory.
                for name in ["one", "two"] {
                    try FileManager.default.createDirectory(at: directory.appendingPathComponent(name), withIntermediateDirectories: true)
                }
                let first = try await TestServer(
                    dataDirectory: directory.appendingPathComponent("one"), database: database, options: Self.serverOptions)
                defer { first.stop() }
                let second = try await TestServer(
                    dataDirectory: directory.appendingPathComponent("two"), database: database, options: Self.serverOptions)
                defer { second.stop() }
                try await Self.twoDevicesComeBack(servers: [first, second], in: directory)
            }
        }
    }

    /// A device enrolled after the server collected a tombstone lacks the deletion every older
    /// device's statement names: it was stated before the device first read the whole feed, so it
    /// is no finding (R62), and a deletion made after that read reaches it.
    @Test func aDeviceEnrolledAfterACollectionReportsNothing() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory.appendingPathComponent("server"), options: Self.serverOptions)
            defer { server.stop() }
            let account = "user-\(UUID().uuidString.prefix(8))"
            let a = TestDevice(name: "a", in: directory), b = TestDevice(name: "b", in: directory), e = TestDevice(name: "e", in: directory)
            try await a.enroll(server, account: account, create: true)
            try await b.enroll(server, account: account)
            try await a.add(service: "x", account: "max", password: "deleted before e came")
            try await a.add(service: "y", account: "max", password: "deleted after e came")
            for device in [a, b] { try await device.sync() }
            try await a.delete(service: "x", account: "max")
            try await eventually(timeout: .seconds(240), "the server to collect x's tombstone") {
                for device in [a, b] { try await device.sync() }
                return try await Self.collectedTombstones(server) >= 1
            }

            try await e.enroll(server, account: account)
            let first = try await e.syncClient(["sync"])
            #expect(first.status == 0, "\(first.stderr)")
            try await a.delete(service: "y", account: "max")
            try await a.sync()
            let next = try await e.syncClient(["sync"])
            #expect(next.status == 0, "\(next.stderr)")
            for service in ["x", "y"] { #expect(try await e.password(service: service, account: "max") == nil, "\(service) on e") }
        }
    }

    /// A stays; C (on the first server) and D (on the second) go silent past the limit while A
    /// deletes x, edits y and adds w, C edits z and D adds v; then both come back.
    private static func twoDevicesComeBack(servers: [TestServer], in directory: URL) async throws {
        let account = "user-\(UUID().uuidString.prefix(8))"
        let a = TestDevice(name: "a", in: directory), c = TestDevice(name: "c", in: directory), d = TestDevice(name: "d", in: directory)
        try await a.enroll(servers[0], account: account, create: true)
        try await c.enroll(servers[0], account: account)
        try await d.enroll(servers[1], account: account)
        try await a.add(service: "x", account: "max", password: "deleted while they are away")
        try await a.add(service: "y", account: "max", password: "before")
        try await a.add(service: "z", account: "max", password: "before")
        for device in [a, c, d] { try await device.sync() }

        try await a.delete(service: "x", account: "max")
        try await a.add(service: "y", account: "max", password: "edited while they are away", update: true)
        try await a.add(service: "w", account: "max", password: "added while they are away")
        try await a.sync()
        try await c.add(service: "z", account: "max", password: "edited by c offline", update: true)
        try await d.add(service: "v", account: "max", password: "added by d offline")
        try await eventually(timeout: .seconds(240), "the server to collect x's tombstone") {
            try await a.sync()
            var collected = 0.0
            for server in servers { collected += try await Self.collectedTombstones(server) }
            return collected >= 1
        }

        // Both come back: each converges at once, and neither takes the other's old statement for
        // a fork (every sync of every device exits 0).
        for _ in 0..<3 {
            for device in [c, d, a] {
                let result = try await device.syncClient(["sync"])
                #expect(result.status == 0, "sync on \(device.name): \(result.stderr)")
            }
        }
        for device in [a, c, d] {
            #expect(try await device.password(service: "x", account: "max") == nil, "x came back on \(device.name)")
            #expect(try await device.password(service: "y", account: "max") == "edited while they are away", "y on \(device.name)")
            #expect(try await device.password(service: "w", account: "max") == "added while they are away", "w on \(device.name)")
            #expect(try await device.password(service: "z", account: "max") == "edited by c offline", "z on \(device.name)")
            #expect(try await device.password(service: "v", account: "max") == "added by d offline", "v on \(device.name)")
            let status = try await device.syncClient(["status"])
            #expect(status.stdout.contains("problems:        0"), "status of \(device.name): \(status.stdout)")
        }
    }

    /// The server's `sync_tombstones_collected_total`, read from its metrics endpoint.
    private static func collectedTombstones(_ server: TestServer) async throws -> Double {
        let result = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/curl"), ["-sk", server.url + "/metrics"])
        let line = result.stdout.split(separator: "\n").first { $0.hasPrefix("sync_tombstones_collected_total") }
        return line.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) } ?? 0
    }
}

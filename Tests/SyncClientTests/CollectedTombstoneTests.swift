import Foundation
import ProcessTesting
import Testing

/// A device offline past the inactivity limit returns after its tombstones were collected: no
/// deletion comes back, its offline edits survive, and what the resync no longer lists is kept and
/// reported, not deleted (absence is not deletion; decision 0106).
@Suite(.serialized)
struct CollectedTombstoneTests {
    @Test func aDeviceBackAfterCollectionRevivesNothingAndKeepsItsOfflineEdits() async throws {
        // A and B sync well within the limit even on a loaded machine (a device silent past it
        // would be one more device back after collection; with 20 s, B once was, while a CI run
        // ran the other suites beside this one); C stays silent past it.
        let options = ["--device-inactivity-limit", "45s", "--tombstone-collection-interval", "1s"]
        try await withAccount(devices: 3, serverOptions: options) { server, devices in
            let (a, b, c) = (devices[0], devices[1], devices[2])
            try await a.add(service: "x", account: "max", password: "to be deleted")
            try await a.add(service: "z", account: "max", password: "before")
            try await a.sync()
            try await b.sync()
            try await c.sync()

            // C goes silent; A deletes x; C edits z offline.
            try await a.delete(service: "x", account: "max")
            try await a.sync()
            try await c.add(service: "z", account: "max", password: "edited offline", update: true)
            try await eventually(timeout: .seconds(240), "the server to collect x's tombstone") {
                try await a.sync()
                try await b.sync()
                return try await Self.collectedTombstones(server) >= 1
            }

            // The round that finds x unlisted says so in its exit status and one line (decision 0106).
            let back = try await c.syncClient(["sync"])
            #expect(back.status != 0)
            #expect(back.stderr.contains("the server no longer lists 1 item(s) this device has"), "\(back.stderr)")
            try await a.sync()
            try await b.sync()
            try await c.sync()
            for device in [a, b] {
                #expect(try await device.password(service: "x", account: "max") == nil, "x came back on \(device.name)")
                #expect(try await device.password(service: "z", account: "max") == "edited offline")
            }
            #expect(try await c.password(service: "z", account: "max") == "edited offline")
            // C keeps its unchanged copy of x (no authenticated evidence of the deletion) and says so.
            #expect(try await c.password(service: "x", account: "max") == "to be deleted")
            let status = try await c.syncClient(["status"])
            #expect(status.stdout.contains("generic password (service \"x\", account \"max\"): the server no longer lists it"))
        }
    }

    /// The server's `sync_tombstones_collected_total`, read from its metrics endpoint.
    private static func collectedTombstones(_ server: TestServer) async throws -> Double {
        let result = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/curl"), ["-sk", server.url + "/metrics"])
        let line = result.stdout.split(separator: "\n").first { $0.hasPrefix("sync_tombstones_collected_total") }
        return line.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) } ?? 0
    }
}

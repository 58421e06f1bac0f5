import Foundation
import ProcessTesting
import SyncCore
import SyncServer
import Testing

/// `sync-server` collects tombstones once at start and then every `--tombstone-collection-interval`;
/// a device silent for longer than `--device-inactivity-limit` no longer holds them back.
@Suite("Tombstone collection of a running server", .serialized)
struct TombstoneCollectionTests {
    /// The value of a metric line `name value`, or nil.
    static func metric(_ name: String, in text: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
    }

    /// Polls `/metrics` until `condition` holds for the collected count and the pass count (30 s at most).
    static func waitForCollection(
        _ server: TestServer, sourceLocation: SourceLocation = #_sourceLocation, _ condition: (Double, Double) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        var last = ""
        while ContinuousClock.now < deadline {
            last = try await RawHTTPConnection.request(port: server.port, pin: nil, method: "GET", path: "/metrics").body
            if let collected = metric("sync_tombstones_collected_total", in: last),
                let passes = metric("sync_tombstone_collections_total", in: last), condition(collected, passes)
            {
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("collection not seen before the deadline; metrics: \(last.split(separator: "\n").filter { $0.contains("tombstone") })", sourceLocation: sourceLocation)
    }

    @Test func collectsAtStartAndThenEveryIntervalPastSilentDevices() async throws {
        try await withTemporaryDirectory { directory in
            let now = Date()
            let account: AccountID
            do {
                let storage = try SQLiteStorage(directory: directory)
                account = try await Fixture.createAccount("alice", in: storage)
                // "silent" was last seen two hours ago: past the one-hour limit, it holds nothing back.
                _ = try await storage.registerDevice(
                    NewDevice(account: account, id: Fixture.device("silent"), name: "silent", tokenHash: Fixture.tokenHash(1)),
                    maximumDevices: 10, now: now.addingTimeInterval(-7_200))
                _ = try await storage.registerDevice(
                    NewDevice(account: account, id: Fixture.device("one"), name: "one", tokenHash: Fixture.tokenHash(2)),
                    maximumDevices: 10, now: now)
                _ = try await Fixture.upload(["x": ["one": 1]], deleted: true, account: account, in: storage)
                try await storage.acknowledge(device: Fixture.device("one"), of: account, zone: "keychain", through: 1, now: now)
            }
            let server = try await TestServer(dataDirectory: directory, relaxedRateLimits: false, options: [
                "--insecure-http", "--tombstone-collection-interval", "2s", "--device-inactivity-limit", "1h",
            ])
            try await Self.waitForCollection(server) { collected, passes in collected == 1 && passes >= 1 }

            // A new tombstone, written while the server runs, goes at a later pass.
            let storage = try SQLiteStorage(directory: directory)
            _ = try await Fixture.upload(["y": ["one": 1]], deleted: true, account: account, cursor: 1, in: storage)
            try await storage.acknowledge(device: Fixture.device("one"), of: account, zone: "keychain", through: 2, now: Date())
            try await Self.waitForCollection(server) { collected, passes in collected == 2 && passes >= 2 }
            let feed = try await storage.changes(ChangeQuery(account: account, zone: "keychain", after: 0, limit: 10))
            #expect(feed == .cursorExpired(horizon: 2))
            server.signal(SIGTERM)
            #expect(await server.waitForExit() == 0)
        }
    }

    @Test(arguments: ["0s", "1", "h", "-5m", "1w", "1.5h", "99999999999d"])
    func badDurationsAreRefused(_ text: String) {
        #expect(WrittenDuration(text) == nil)
    }

    @Test func durationsAreReadInTheirUnit() {
        #expect(WrittenDuration("90s")?.duration == .seconds(90))
        #expect(WrittenDuration("15m")?.duration == .seconds(900))
        #expect(WrittenDuration("1h")?.duration == .seconds(3_600))
        #expect(WrittenDuration("30d")?.duration == .seconds(2_592_000))
    }
}

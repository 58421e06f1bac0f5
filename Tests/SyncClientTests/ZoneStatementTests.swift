import Foundation
import SyncClient
import SyncProtocol
import Testing

/// Signed zone statements against a server that hides or forks (issue 12, decision 0180): real
/// processes, the rewriting proxy in front of the real server for device B. A hidden item and a
/// forked history are reported (`sync` fails with one line, `status` shows the problem) and change
/// nothing; the honest path reports nothing.
@Suite(.serialized)
struct ZoneStatementTests {
    /// Hiding the first item leaves the newest write: the states hold the same writes and differ
    /// (diverged); hiding the last hides the newest write (withheld). Shifting the device's feed
    /// positions as well changes nothing: positions play no part in the check.
    @Test(arguments: [RewritingProxy.Mode.hide, .hideLast, .shiftAndHide])
    func anItemHiddenFromANewDeviceIsReportedAndChangesNothing(mode: RewritingProxy.Mode) async throws {
        try await withDevices { a, b, _, proxy in
            // Two syncs: x before y in the feed, y the newest write.
            try await a.add(service: "x", account: "max", password: "one")
            try await a.sync()
            try await a.add(service: "y", account: "max", password: "two")
            try await a.sync()

            // B has never synced: the server serves it the account without one of A's items.
            try proxy.set(mode)
            let hidden = try await b.syncClient(["sync"])
            #expect(hidden.status != 0)
            #expect(hidden.stderr.contains("hidden items or a forked history"), "\(hidden.stderr)")
            #expect(hidden.stderr.contains(Self.finding(of: mode)), "\(hidden.stderr)")
            #expect(hidden.stderr.split(separator: "\n").filter { $0.contains("forked history") }.count == 1, "\(hidden.stderr)")
            #expect(try await b.password(service: "x", account: "max") == nil)
            #expect(try await b.password(service: "y", account: "max") == nil)
            let status = try await b.syncClient(["status"])
            #expect(status.stdout.contains("the account's state"), "\(status.stdout)")

            // The honest server again: everything arrives, the problem is settled.
            try proxy.set(.pass)
            try await b.sync()
            #expect(try await b.password(service: "x", account: "max") == "one")
            #expect(try await b.password(service: "y", account: "max") == "two")
            let settled = try await b.syncClient(["status"])
            #expect(!settled.stdout.contains("the account's state"), "\(settled.stdout)")
        }
    }

    @Test(arguments: [RewritingProxy.Mode.hide, .hideLast])
    func aForkedHistoryIsReportedAndChangesNothing(mode: RewritingProxy.Mode) async throws {
        try await withDevices { a, b, _, proxy in
            try await a.add(service: "x", account: "max", password: "old")
            try await a.sync()
            try await b.sync()
            #expect(try await b.password(service: "x", account: "max") == "old")

            // A writes twice (x, then z, the newest); the server shows B a history without one of the writes and says
            // B is in step.
            try await a.add(service: "x", account: "max", password: "new", update: true)
            try await a.sync()
            try await a.add(service: "z", account: "max", password: "three")
            try await a.sync()
            try proxy.set(mode)
            let forked = try await b.syncClient(["sync"])
            #expect(forked.status != 0)
            #expect(forked.stderr.contains("hidden items or a forked history"), "\(forked.stderr)")
            #expect(forked.stderr.contains(Self.finding(of: mode)), "\(forked.stderr)")
            #expect(try await b.password(service: "x", account: "max") == "old")
            #expect(try await b.password(service: "z", account: "max") == nil)
            let status = try await b.syncClient(["status"])
            #expect(status.stdout.contains("the account's state"), "\(status.stdout)")

            // A, served honestly, sees nothing wrong; B, served honestly again, catches up.
            try await a.sync()
            try proxy.set(.pass)
            try await b.sync()
            #expect(try await b.password(service: "x", account: "max") == "new")
            #expect(try await b.password(service: "z", account: "max") == "three")
        }
    }

    /// A server that serves a device an item's earlier version in place of its tombstone (a
    /// replay) hid the deletion while its write was the deleting device's newest: the live writes
    /// stated were all served. The deletion's write is in the deleting device's statement and was
    /// stated after the device last read the whole feed, so it is reported (R62) and the replay is
    /// not applied; the honest server's next answer, a full read, removes the item.
    @Test func aDeletionReplacedByTheItemsEarlierVersionIsReported() async throws {
        try await withDevices { a, b, _, proxy in
            try await a.add(service: "x", account: "max", password: "one")
            try await a.sync()
            try await b.sync()
            let earlier = try #require(try await KeyEpochTests.servedBlobs(of: a, zone: "keychain").first)
            try await a.delete(service: "x", account: "max")
            try await a.sync()

            try proxy.serveVersions([
                FeedItem(id: earlier.item, sequence: 0, versions: [WireVersion(vector: earlier.vector, deleted: false, blob: Base64Bytes(earlier.blob))])
            ])
            let replayed = try await b.syncClient(["sync"])
            #expect(replayed.status != 0)
            #expect(replayed.stderr.contains("stated writes the server did not serve here"), "\(replayed.stderr)")
            let status = try await b.syncClient(["status"])
            #expect(status.stdout.contains("the account's state"), "\(status.stdout)")

            try proxy.serveVersions([])
            let honest = try await b.syncClient(["sync"])
            #expect(honest.status == 0, "\(honest.stderr)")
            #expect(try await b.password(service: "x", account: "max") == nil)
            let settled = try await b.syncClient(["status"])
            #expect(!settled.stdout.contains("the account's state"), "\(settled.stdout)")
        }
    }

    /// Decision 0287: a device still served less than another device stated, after reading the
    /// whole feed again (its second `sync`), names that statement in its own; the device named
    /// reads the whole feed giving back, in the same `sync`, and reports it; once the server serves
    /// everything, neither reports anything.
    @Test func aDeviceServedLessNamesTheStatementAndTheDeviceNamedGivesBack() async throws {
        try await withDevices { a, b, _, proxy in
            try await a.add(service: "x", account: "max", password: "one")
            try await a.sync()
            try await b.sync()
            try await a.add(service: "y", account: "max", password: "two")
            try await a.sync()

            try proxy.set(.hideLast)
            let first = try await b.syncClient(["sync"])
            #expect(first.status != 0)
            #expect(first.stderr.contains("the rest of this pull was not applied"), "\(first.stderr)")
            let again = try await b.syncClient(["sync"])
            #expect(again.status != 0)
            #expect(again.stderr.contains("also after reading the whole feed again"), "\(again.stderr)")
            #expect(try await b.password(service: "y", account: "max") == nil)

            let named = try await a.syncClient(["sync"])
            #expect(named.status != 0)
            #expect(named.stderr.contains("states the server did not serve it the writes this device stated"), "\(named.stderr)")
            // Given back and stated again: the statement b named is no longer a's latest.
            let settled = try await a.syncClient(["sync"])
            #expect(settled.status == 0, "\(settled.stderr)")
            #expect(!(try await a.syncClient(["status"])).stdout.contains("the account's state"))

            try proxy.set(.pass)
            try await b.sync()
            #expect(try await b.password(service: "y", account: "max") == "two")
            #expect(!(try await b.syncClient(["status"])).stdout.contains("the account's state"))
            try await a.sync()
        }
    }

    /// Decision 0239: a statement's age is told on the server's clock, so the statement of a device
    /// whose own clock is a year ahead still binds the server for a device whose clock is right
    /// (on their own clocks it was made a year in the future, and counted for nothing).
    @Test func aWriteWithheldIsReportedWhenTheStatingDevicesClockIsAYearAhead() async throws {
        try await withDevices { a, b, _, proxy in
            let ahead = a.withClock(offset: "+365d")
            try await ahead.add(service: "x", account: "max", password: "one")
            try await ahead.sync()
            try await ahead.add(service: "y", account: "max", password: "two")
            try await ahead.sync()

            try proxy.set(.hideLast)
            let hidden = try await b.syncClient(["sync"])
            #expect(hidden.status != 0)
            #expect(hidden.stderr.contains("stated writes the server did not serve here"), "\(hidden.stderr)")
            #expect(try await b.password(service: "y", account: "max") == nil)

            try proxy.set(.pass)
            try await b.sync()
            #expect(try await b.password(service: "y", account: "max") == "two")
        }
    }

    @Test func aValueHiddenFromAKeyValueStoreIsReportedAndChangesNothing() async throws {
        try await withDevices { a, b, _, proxy in
            // Two syncs: theme before size in the store's feed.
            try await a.setValue("dark", forKey: "theme", store: "app")
            try await a.sync()
            try await a.setValue("large", forKey: "size", store: "app")
            try await a.sync()

            try proxy.set(.hideKeyValue)
            let hidden = try await b.syncClient(["sync"])
            #expect(hidden.status != 0)
            #expect(hidden.stderr.contains("hidden items or a forked history"), "\(hidden.stderr)")
            #expect(try await b.value(forKey: "theme", store: "app") == nil)
            #expect(try await b.value(forKey: "size", store: "app") == nil)
            // `status` names the store's problem with its reason, as it does the keychain's.
            let status = try await b.syncClient(["status"])
            #expect(status.stdout.contains("    the account's state: zone kv."), "\(status.stdout)")
            #expect(status.stdout.contains("hidden items or a forked history"), "\(status.stdout)")
            let json = try await b.syncClient(["status", "--json"])
            #expect(json.stdout.contains("\"name\" : \"the account's state\""), "\(json.stdout)")

            try proxy.set(.pass)
            try await b.sync()
            #expect(try await b.value(forKey: "theme", store: "app") == "dark")
            #expect(try await b.value(forKey: "size", store: "app") == "large")
        }
    }

    @Test func theHonestPathReportsNothing() async throws {
        try await withDevices { a, b, c, _ in
            try await a.add(service: "x", account: "max", password: "one")
            try await a.add(service: "y", account: "max", password: "two")
            try await a.setValue("dark", forKey: "theme", store: "app")
            try await a.sync()
            for device in [b, c, a] { try await device.sync() }

            // A deletion, concurrent edits of one item on two devices, a key-value write, and
            // syncs in an order where statements are made while others' writes are in flight.
            try await b.delete(service: "y", account: "max")
            try await a.add(service: "x", account: "max", password: "from a", update: true)
            try await c.add(service: "x", account: "max", password: "from c", update: true)
            try await c.setValue("light", forKey: "theme", store: "app")
            try await b.sync()
            try await a.sync()
            try await c.sync()
            for device in [a, b, c, a, b] { try await device.sync() }

            let winner = try await a.password(service: "x", account: "max")
            for device in [a, b, c] {
                #expect(try await device.password(service: "y", account: "max") == nil, "on \(device.name)")
                #expect(try await device.password(service: "x", account: "max") == winner, "on \(device.name)")
                #expect(try await device.value(forKey: "theme", store: "app") == "light", "on \(device.name)")
                let status = try await device.syncClient(["status"])
                #expect(!status.stdout.contains("the account's state"), "on \(device.name): \(status.stdout)")
            }
        }
    }

    /// What statements cost on the wire, measured at the proxy for device B of three: a quiet
    /// `sync` (nothing changed: the reads only) and one after another device wrote (B's statement
    /// changes and is published), over the keychain zone and the key-value store directory.
    @Test func statementsCostAFewKilobytesPerSyncAndNothingPerItem() async throws {
        try await withDevices { a, b, c, proxy in
            for index in 0..<20 { try await a.add(service: "item\(index)", account: "max", password: "p\(index)") }
            for device in [a, b, c, a, b] { try await device.sync() }

            let before = try proxy.carried()
            try await b.sync()
            let quiet = try proxy.carried().subtracting(before)
            for index in 0..<20 { try await a.add(service: "more\(index)", account: "max", password: "m\(index)") }
            try await a.sync()
            let beforeChange = try proxy.carried()
            try await b.sync()
            let changed = try proxy.carried().subtracting(beforeChange)
            print("0180 cost per sync of device B (3 devices, zones keychain and kv): quiet \(quiet.sorted { $0.key < $1.key }); after 20 writes elsewhere \(changed.sorted { $0.key < $1.key })")

            #expect(quiet["PUT statement", default: 0] == 0, "\(quiet)")
            #expect(changed["PUT statement", default: 0] > 0, "\(changed)")
            // Every device's latest statement per zone, whatever the vault's size.
            #expect(quiet["GET statements", default: 0] < 2 * 3 * 1024, "\(quiet)")
            #expect(changed["GET statements", default: 0] < 2 * 3 * 1024, "\(changed)")
        }
    }

    /// What a device finds when the first item of the page is hidden (the newest write stays:
    /// the same writes, another state) or the last (the newest write is missing).
    private static func finding(of mode: RewritingProxy.Mode) -> String {
        mode == .hideLast ? "stated writes the server did not serve here" : "differs from the one device"
    }

    /// A plain-HTTP server; devices A and C enrolled directly, B through the proxy; none synced.
    /// A server that sends a time a month ahead (its `Date` header) once aged every statement past
    /// the freshness window, so a hidden write counted for nothing. Ages are measured on the
    /// device's own clock since it last trusted the server's time (design §8).
    @Test func aServerClockAMonthAheadDoesNotAgeTheStatementsADeviceIsHeldTo() async throws {
        try await withDevices { a, b, _, proxy in
            try await a.add(service: "x", account: "max", password: "one")
            try await a.sync()
            // B syncs once honestly: it has read the server's time.
            try await b.sync()
            try await a.add(service: "y", account: "max", password: "two")
            try await a.sync()

            try proxy.shiftDate(by: 31 * 24 * 3600)
            try proxy.set(.hideLast)
            let hidden = try await b.syncClient(["sync"])
            #expect(hidden.status != 0)
            #expect(hidden.stderr.contains("hidden items or a forked history"), "\(hidden.stderr)")
            #expect(try await b.password(service: "y", account: "max") == nil)
        }
    }

    private func withDevices(_ body: (TestDevice, TestDevice, TestDevice, RewritingProxy) async throws -> Void) async throws {
        try await withProxiedAccount(["a", "b", "c"], proxied: ["b"]) { account in
            try await body(account.devices[0], account.devices[1], account.devices[2], account.proxy)
        }
    }
    /// Decision 0231: a server's shorter inactivity limit shortens how long a statement binds it
    /// (else a device reports as withheld a write whose tombstone the server rightly collected),
    /// but never under a day, and a longer one changes nothing.
    @Test func aServersShorterInactivityLimitShortensFreshnessButNotUnderADay() {
        let day: Int64 = 24 * 3600 * 1000
        #expect(ZoneWitness.freshness(30 * day, announced: nil) == 30 * day)
        #expect(ZoneWitness.freshness(30 * day, announced: 7 * day) == 7 * day)
        #expect(ZoneWitness.freshness(30 * day, announced: 90 * day) == 30 * day)
        #expect(ZoneWitness.freshness(30 * day, announced: 20_000) == day)
        #expect(ZoneWitness.freshness(30 * day, announced: 0) == day)
    }
}

extension Dictionary where Key == String, Value == Int {
    /// The counts that grew since `earlier`, by how much.
    func subtracting(_ earlier: Self) -> Self {
        merging(earlier.mapValues { -$0 }, uniquingKeysWith: +).filter { $0.value != 0 }
    }
}

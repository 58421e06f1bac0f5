import SyncTesting
import Testing

/// Items the server refuses are per-item problems and everything else syncs (decisions 0105,
/// 0224), in process, against a loopback with the server's limits set low. `RefusedItemTests`
/// keeps B2 and the server's batch limit with the binaries.
@Suite("Refused items, in process")
struct RefusedItemInProcessTests {
    /// Below the client's own limit, over the server's: the server's `too_large` names the item.
    @Test func itemsTheServerRefusesAreProblemsAndTheRestOfTheBatchIsPushed() async throws {
        var limits = LoopbackAccount.Limits()
        limits.maximumBlobBytes = 4096
        try await LoopbackAccount.with(limits: limits) { account in
            let (a, b) = (try await account.device("a"), try await account.device("b"))
            try a.add(service: "medium", account: "max", password: String(repeating: "m", count: 10_000))
            try a.add(service: "y", account: "max", password: "why")
            try await a.sync()
            try await b.sync()
            #expect(try b.password(service: "y", account: "max") == "why")
            #expect(try b.password(service: "medium", account: "max") == nil)
            let problems = try a.problems()
            #expect(problems.count == 1)
            #expect(problems["medium/max"]?.contains("too large") == true, "\(problems)")
        }
    }

    /// Decision 0224: a batch over the server's request limit is refused naming no item; it is
    /// split, and an item too large alone for the limit is set aside like any refused item.
    @Test func aBatchOverTheServersRequestLimitIsSplitAndTheZoneKeepsSyncing() async throws {
        var limits = LoopbackAccount.Limits()
        // `--max-request-bytes 65536` counts the JSON, in which blobs are base64: 49,152 blob bytes.
        limits.maximumRequestBytes = 49_152
        try await LoopbackAccount.with(limits: limits) { account in
            let (a, b) = (try await account.device("a"), try await account.device("b"))
            // Each item alone fits the limit; twelve of them in one request do not.
            for index in 0..<12 {
                try a.add(service: "item\(index)", account: "max", password: String(repeating: "\(index % 10)", count: 9_000))
            }
            // Under the client's own 64 KiB blob limit, over the server's request limit alone.
            try a.add(service: "huge", account: "max", password: String(repeating: "h", count: 60_000))
            try await a.sync()
            try await b.sync()
            for index in 0..<12 {
                #expect(try b.password(service: "item\(index)", account: "max")?.count == 9_000, "item\(index)")
            }
            #expect(try b.password(service: "huge", account: "max") == nil)
            let problems = try a.problems()
            #expect(problems["huge/max"]?.hasPrefix("too large to sync") == true, "\(problems)")
            #expect(await !a.driver.hasPendingChanges)
            // The next round pushes nothing again and ends in step.
            #expect(try await a.sync().pushed == 0)
        }
    }

    @Test func anItemOverTheAccountQuotaIsSetAsideAndUpdatesOfOtherItemsStillSync() async throws {
        var limits = LoopbackAccount.Limits()
        limits.upload.maximumItemsPerAccount = 2
        try await LoopbackAccount.with(limits: limits) { account in
            let (a, b) = (try await account.device("a"), try await account.device("b"))
            try a.add(service: "p", account: "max", password: "one")
            try await a.sync()
            try b.add(service: "z", account: "max", password: "zed")
            try await b.sync()
            try a.add(service: "q", account: "max", password: "over the quota")
            try a.add(service: "p", account: "max", password: "two", update: true)
            try await a.sync()
            try await b.sync()
            #expect(try b.password(service: "p", account: "max") == "two")
            #expect(try b.password(service: "q", account: "max") == nil)
            #expect(try a.password(service: "z", account: "max") == "zed")
            let problems = try a.problems()
            #expect(problems["q/max"]?.contains("quota") == true, "\(problems)")
            // A later sync tries it again (the account may have room by then) and stays in step.
            try await a.sync()
            #expect(await a.driver.setAside.count == 1)
        }
    }
}

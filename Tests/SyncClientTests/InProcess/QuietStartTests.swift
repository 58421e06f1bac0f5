import Synchronization
import SyncClient
import SyncTesting
import Testing

/// A start whose state has nothing waiting loads no record (issue 35: a quiet sync costs what
/// changed, not the zone's size): a quiet round stays without them, and whatever they decide (a
/// page with items, a local change, a version waiting to be pushed) loads them first, so the round
/// does what it did with them from the start.
@Suite("A quiet start")
struct QuietStartTests {
    @Test func aQuietRoundLoadsNoRecordAndAPulledChangeLoadsThem() async throws {
        try await LoopbackAccount.with { account in
            let (a, b) = (try await account.device("a"), try await account.device("b"))
            for name in ["x", "y", "z"] { try a.add(service: name, account: "kim", password: "v1") }
            try await a.sync()
            try await b.sync()

            try a.restart()
            #expect(await !a.driver.holdsRecords)
            let quiet = try await a.sync()
            #expect(quiet.pushed == 0 && quiet.applied == 0)
            #expect(await !a.driver.holdsRecords, "a round with nothing to do loaded the records")
            #expect(try await a.driver.records.count == 3, "the records read without a driver that holds them")
            // The quiet round kept the view under its own epoch: the next start is quiet too.
            try a.restart()
            #expect(await !a.driver.holdsRecords)

            try b.add(service: "y", account: "kim", password: "v2 from b", update: true)
            try await b.sync()
            let pulled = try await a.sync()
            #expect(pulled.applied == 1)
            #expect(await a.driver.holdsRecords)
            #expect(try a.password(service: "y", account: "kim") == "v2 from b")
            #expect(try await a.driver.records.count == 3)
        }
    }

    @Test func aLocalChangeAfterAQuietStartIsPushedOverWhatTheRecordsHold() async throws {
        try await LoopbackAccount.with { account in
            let (a, b) = (try await account.device("a"), try await account.device("b"))
            try a.add(service: "x", account: "kim", password: "v1")
            try await a.sync()
            try await b.sync()
            try b.add(service: "x", account: "kim", password: "v2 from b", update: true)
            try await b.sync()
            try await a.sync()

            try a.restart()
            #expect(await !a.driver.holdsRecords)
            try a.add(service: "x", account: "kim", password: "v3 from a", update: true)
            try a.delete(service: "x", account: "kim")
            try a.add(service: "w", account: "kim", password: "new on a")
            let pushed = try await a.sync()
            #expect(pushed.pushed == 2)
            try await b.sync()
            // The deletion descends from b's write: nothing concurrent, nothing comes back.
            #expect(try b.password(service: "x", account: "kim") == nil)
            #expect(try b.password(service: "w", account: "kim") == "new on a")
            #expect(try b.problems().isEmpty && a.problems().isEmpty)
        }
    }

    @Test func aStateWithABatchUnansweredLoadsItsRecordsAtTheStart() async throws {
        try await LoopbackAccount.with { account in
            let losing = Mutex(false)
            let a = try await account.device("a", fault: { call, stage in
                if call == .push, stage == .answer, losing.withLock({ $0 }) { throw LoopbackZoneServer.Lost() }
            })
            try a.add(service: "x", account: "kim", password: "v1")
            try await a.sync()
            try a.restart()
            #expect(await !a.driver.holdsRecords)
            try a.add(service: "x", account: "kim", password: "v2", update: true)
            losing.withLock { $0 = true }
            await #expect(throws: (any Error).self) { try await a.driver.round() }
            losing.withLock { $0 = false }
            try a.restart()
            #expect(await a.driver.holdsRecords, "a state with a batch unanswered started without its records")
            let resent = try await a.sync()
            #expect(resent.pushed == 1)
            let b = try await account.device("b")
            try await b.sync()
            #expect(try b.password(service: "x", account: "kim") == "v2")
        }
    }
}

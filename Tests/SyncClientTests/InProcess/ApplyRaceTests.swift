import SyncTesting
import Testing

/// The driver with a hook at the moment it applies a pulled page (decisions 0054, 0107), in
/// process: a local write lands exactly between its journal read and its apply, or the round dies
/// right after the apply, before its state is committed, deterministically.
@Suite("A local write or a death at the apply")
struct ApplyRaceTests {
    @Test func aLocalWriteRacingAPulledVersionIsNotOverwritten() async throws {
        try await LoopbackAccount.with { account in
            let (a, b) = (try await account.device("a"), try await account.device("b"))
            try a.add(service: "race", account: "eve", password: "from-a")
            try await a.sync()
            let fired = Counter()
            await b.driver.setApplyHooks(before: {
                guard fired.increment() == 1 else { return }
                // The user writes after the driver read the journal, before the page lands.
                try b.add(service: "race", account: "eve", password: "b-local")
            })
            try await b.sync()
            #expect(fired.value >= 2)
            try await a.sync()
            // b's write came after a's version reached b: it wins, and a's value is kept in history.
            #expect(try b.password(service: "race", account: "eve") == "b-local")
            #expect(try a.password(service: "race", account: "eve") == "b-local")
            #expect(try b.history(service: "race", account: "eve") == ["from-a"])
        }
    }

    @Test func aResolutionReplayedAfterDyingMidApplyKeepsTheLoserOnce() async throws {
        try await LoopbackAccount.with { account in
            let (a, b) = (try await account.device("a"), try await account.device("b"))
            try a.add(service: "replay", account: "fay", password: "from-a")
            try b.add(service: "replay", account: "fay", password: "from-b")
            try await a.sync()
            let died = Counter()
            await b.driver.setApplyHooks(after: {
                // Dies once, right after the keychain took the page and before the state commit.
                if died.increment() == 1 { throw CancellationError() }
            })
            await #expect(throws: (any Error).self) { try await b.sync() }
            try await b.sync()
            #expect(died.value >= 2)
            try await a.sync()
            #expect(try a.password(service: "replay", account: "fay") == "from-b")
            #expect(try b.history(service: "replay", account: "fay") == ["from-a"])
        }
    }
}

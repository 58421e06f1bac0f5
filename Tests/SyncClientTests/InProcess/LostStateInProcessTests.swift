import SyncCore
import SyncTesting
import Synchronization
import Testing

/// A device that lost its sync state and enrols again (decision 0106), in process. `LostStateTests`
/// keeps B1 and the enrolment that retires the earlier one with the binaries.
@Suite("A device without its sync state, in process")
struct LostStateInProcessTests {
    @Test func aDeviceWithoutStateKeepsItsOwnNewerWriteOfADeletedItem() async throws {
        try await LoopbackAccount.with { account in
            let (a, b) = (try await account.device("a"), try await account.device("b"))
            try b.add(service: "x", account: "max", password: "old")
            try await b.sync()
            try await a.sync()
            try a.delete(service: "x", account: "max")
            try await a.sync()
            // B writes x again after A deleted it, then loses its state.
            try b.add(service: "x", account: "max", password: "written after the deletion", update: true)
            try await b.loseStateAndEnrolAgain()
            try await b.sync()
            try await a.sync()
            #expect(try a.password(service: "x", account: "max") == "written after the deletion")
            #expect(try b.password(service: "x", account: "max") == "written after the deletion")
        }
    }

    /// Found by the simulation of the shipped driver (decision 0175): a device without state took
    /// the value a sync had given it, or one it wrote and pushed long ago, for a new write, and it
    /// could win against a later write. Now it knows those copies and takes the server's value.
    @Test func aDeviceWithoutStateDoesNotPushBackValuesItOnlyHeld() async throws {
        try await LoopbackAccount.with { account in
            let (a, b) = (try await account.device("a"), try await account.device("b"))
            try a.add(service: "pulled", account: "max", password: "first")
            try b.add(service: "pushed", account: "max", password: "first")
            try await a.sync()
            try await b.sync()
            try await a.sync()
            // A changes both later; B, holding the first values, loses its state.
            try a.add(service: "pulled", account: "max", password: "second", update: true)
            try a.add(service: "pushed", account: "max", password: "second", update: true)
            try await a.sync()
            try await b.loseStateAndEnrolAgain()
            // Neither copy is a write of B's: nothing is pushed (before, both were, as new writes).
            let back = try await b.sync()
            #expect(back.pushed == 0 && back.applied == 2, "\(back)")
            try await a.sync()
            for device in [a, b] {
                #expect(try device.password(service: "pulled", account: "max") == "second", "on \(device.name)")
                #expect(try device.password(service: "pushed", account: "max") == "second", "on \(device.name)")
            }
            #expect(await !b.driver.hasPendingChanges)
        }
    }

    /// A deletion made while the state was lost reaches the others (it was dropped before: with no
    /// known basis it lost to the value it deleted).
    @Test func aDeletionMadeBeforeTheStateWasLostReachesTheOthers() async throws {
        try await LoopbackAccount.with { account in
            let (a, b) = (try await account.device("a"), try await account.device("b"))
            try a.add(service: "x", account: "max", password: "to be deleted")
            try await a.sync()
            try await b.sync()
            try b.delete(service: "x", account: "max")
            try await b.loseStateAndEnrolAgain()
            try await b.sync()
            try await a.sync()
            #expect(try a.password(service: "x", account: "max") == nil)
            #expect(try b.password(service: "x", account: "max") == nil)
        }
    }

    /// Simulation seed 167 (malicious, 400 operations): a copy an earlier enrolment took from the
    /// server, which the new enrolment's resync did not list, is still known by the server's
    /// version it holds once the new state has pulled (a new process): an older version listed
    /// later is refused as going backwards, not applied over it.
    @Test func aCopyKeptFromAnEarlierEnrolmentRefusesAnOlderVersionListedLater() async throws {
        try await LoopbackAccount.with { account in
            let (a, b) = (try await account.device("a"), try await account.device("b"))
            let server = try await Self.secondVersionTakenThroughReplayingServer(a, b)
            // Enrolled again, b is served a resync without x: kept, reported unlisted.
            server.act.withLock { $0 = .hide }
            try await b.loseStateAndEnrolAgain(tampering: server.tampering)
            _ = try? await b.sync()
            #expect(try b.password(service: "x", account: "kim") == "second")
            // A new process; the server lists x's first version beside a later change.
            server.act.withLock { $0 = .replay }
            try b.restart()
            try a.add(service: "y", account: "kim", password: "other")
            try await a.sync()
            _ = try? await b.sync()
            #expect(try b.password(service: "x", account: "kim") == "second")
            #expect(try b.problems()["x/kim"] == "its version vector goes backwards")
        }
    }

    /// Simulation seed 527 (malicious, replay, 120 operations): a device back without its state
    /// holds an item ahead (its store took the item's second version); its first pull is served
    /// the item's first version at the sequence of the item's deletion, which it refuses as going
    /// backwards. Its cursor stops below that sequence (R35), so the next pull, in a new process
    /// too, lists the item again, and the deletion is applied.
    @Test func anItemHeldAheadAndRefusedOnAFirstPullIsListedAgainByTheNextPull() async throws {
        try await LoopbackAccount.with { account in
            let (a, b) = (try await account.device("a"), try await account.device("b"))
            let server = try await Self.secondVersionTakenThroughReplayingServer(a, b)
            #expect(try b.password(service: "x", account: "kim") == "second")
            try await b.loseStateAndEnrolAgain(tampering: server.tampering)
            try a.delete(service: "x", account: "kim")
            try await a.sync()
            server.act.withLock { $0 = .serveFirst }
            _ = try? await b.sync()
            #expect(try b.password(service: "x", account: "kim") == "second")
            #expect(try b.problems()["x/kim"] == "its version vector goes backwards")
            // The server answers honestly again; a new process.
            server.act.withLock { $0 = .record }
            try b.restart()
            try await b.sync()
            #expect(try b.password(service: "x", account: "kim") == nil)
            #expect(try b.problems()["x/kim"] == nil)
        }
    }

    /// The items as the syncs left them are read once, when the driver starts (rule R52); a write
    /// after that read is still a change: an item a sync removed and one the device holds, both
    /// written here after the device enrolled again, reach the others.
    @Test func writesAfterEnrollingAgainToItemsTheSyncsLeftArePushed() async throws {
        try await LoopbackAccount.with { account in
            let (a, b) = (try await account.device("a"), try await account.device("b"))
            try a.add(service: "removed", account: "max", password: "first")
            try a.add(service: "held", account: "max", password: "first")
            try await a.sync()
            try await b.sync()
            try a.delete(service: "removed", account: "max")
            try await a.sync()
            try await b.sync()
            #expect(try b.password(service: "removed", account: "max") == nil)
            try await b.loseStateAndEnrolAgain()
            try b.add(service: "removed", account: "max", password: "written again")
            try b.add(service: "held", account: "max", password: "written again", update: true)
            try await b.sync()
            try await a.sync()
            for device in [a, b] {
                #expect(try device.password(service: "removed", account: "max") == "written again", "on \(device.name)")
                #expect(try device.password(service: "held", account: "max") == "written again", "on \(device.name)")
            }
        }
    }

    /// a writes x twice; b, enrolled again to reach the server through a `ReplayingServer` (which
    /// records x's first version), takes each. Returns that server.
    private static func secondVersionTakenThroughReplayingServer(_ a: LoopbackDevice, _ b: LoopbackDevice) async throws -> ReplayingServer {
        let server = ReplayingServer()
        try a.add(service: "x", account: "kim", password: "first")
        try await a.sync()
        try await b.loseStateAndEnrolAgain(tampering: server.tampering)
        try await b.sync()
        try a.add(service: "x", account: "kim", password: "second", update: true)
        try await a.sync()
        try await b.sync()
        return server
    }
}

import SyncCore
import Testing

/// A device bounds its own modification times against the server's clock (B7, decision 0108).
@Suite struct ModificationTimeBoundTests {
    let server: Int64 = 1_800_000_000_000
    let year: Int64 = 365 * 24 * 3600 * 1000

    @Test func aClockAYearAheadStampsItsChangesWithTheServersTime() {
        let bound = ModificationTimeBound(localNow: server + year, serverNow: server)
        #expect(bound.bounded(server + year) == server)
        // An offline change made an hour earlier on the same clock keeps its place.
        #expect(bound.bounded(server + year - 3_600_000) == server - 3_600_000)
    }

    @Test func aClockAYearBehindIsMovedForwardToo() {
        let bound = ModificationTimeBound(localNow: server - year, serverNow: server)
        #expect(bound.bounded(server - year - 5_000) == server - 5_000)
    }

    @Test func aClockWithinTheWindowIsLeftAlone() {
        let bound = ModificationTimeBound(localNow: server + 30_000, serverNow: server)
        #expect(bound.bounded(server + 30_000) == server + 30_000)
        #expect(bound.bounded(server - 10_000) == server - 10_000)
    }

    @Test func aStampFromAClockSinceCorrectedIsCappedAtTheWindow() {
        // Written while the clock ran a year ahead, taken after it was set right.
        let bound = ModificationTimeBound(localNow: server, serverNow: server)
        #expect(bound.bounded(server + year) == server + ModificationTimeBound.window)
    }

    /// A change made while the clock was right and taken after it jumped a year ahead was
    /// stamped a year early, so an older copy won a later conflict (400-operation seeds).
    @Test func aChangeMadeBeforeTheClockJumpedAheadIsNotStampedBeforeTheLastTake() {
        let lastTake = server - 600_000
        var bound = ModificationTimeBound(localNow: server + year, serverNow: server)
        bound.changesTakenBefore = lastTake
        // Made five minutes ago on the right clock: raised to the last take, less the window.
        #expect(bound.bounded(server - 300_000) == lastTake - ModificationTimeBound.window)
        // Made on the jumped clock: translated as before.
        #expect(bound.bounded(server + year - 60_000) == server - 60_000)
        // A server clock that went back below the last take never raises a stamp past its now.
        bound.changesTakenBefore = server + year
        #expect(bound.bounded(server - year) == server)
    }

    /// A change made while the clock was right and taken after it went back a year was moved
    /// forward by the year, to about now, and won a conflict with a later write (seed 311).
    @Test func aChangeMadeBeforeTheClockWentBackKeepsItsStamp() {
        let bound = ModificationTimeBound(localNow: server - year, serverNow: server)
        #expect(bound.bounded(server - 7_200_000) == server - 7_200_000)
        // Made on the clock as it is now: translated.
        #expect(bound.bounded(server - year - 5_000) == server - 5_000)
    }

    @Test func noStampLeadsTheServerByMoreThanTheWindow() {
        var random = TestRandom(seed: 7)
        for _ in 0..<1_000 {
            let lead = Int64.random(in: -2 * year...2 * year, using: &random)
            let made = Int64.random(in: -year...year, using: &random)
            let bound = ModificationTimeBound(localNow: server + lead, serverNow: server)
            #expect(bound.bounded(server + lead + made) <= server + ModificationTimeBound.window)
        }
    }
}

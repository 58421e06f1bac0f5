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

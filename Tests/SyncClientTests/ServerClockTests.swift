import Foundation
import Synchronization
import SyncClient
import Testing

/// The server's clock read from `Date` headers and advanced by the monotonic clock (decision 0108).
@Suite struct ServerClockTests {
    @Test func theServersTimeAdvancesWithTheMonotonicClockOnly() {
        let monotonic = Mutex(ContinuousClock.now)
        let start = monotonic.withLock { $0 }
        let clock = ServerClock(monotonic: { monotonic.withLock { $0 } })
        #expect(clock.now() == nil)
        clock.record(dateHeader: "Sun, 22 Nov 2026 22:28:08 GMT")
        let read = Date(timeIntervalSince1970: 1_795_386_488)
        #expect(clock.now() == read)
        monotonic.withLock { $0 = start.advanced(by: .milliseconds(1_500)) }
        #expect(clock.now() == read.addingTimeInterval(1.5))
    }

    @Test func anUnreadableDateHeaderKeepsTheLastReading() {
        let clock = ServerClock()
        clock.record(dateHeader: "yesterday")
        clock.record(dateHeader: nil)
        #expect(clock.now() == nil)
        clock.record(dateHeader: "Sun, 22 Nov 2026 22:28:08 GMT")
        clock.record(dateHeader: "not a date")
        #expect(clock.now().map { abs($0.timeIntervalSince1970 - 1_795_386_488) < 60 } == true)
    }
}

/// The server's time for statement ages is trusted only as far as the device's own clock advanced
/// since it last trusted one (design §8).
@Suite struct TrustedServerClockTests {
    let anchor = TrustedServerClock.Anchor(server: Date(timeIntervalSince1970: 1_800_000_000), local: Date(timeIntervalSince1970: 1_700_000_000))

    @Test func aServerClockThatJumpsAheadIsHeldToTheDevicesOwnAdvance() {
        let local = anchor.local.addingTimeInterval(3_600)
        let monthAhead = anchor.server.addingTimeInterval(3_600 + 31 * 24 * 3_600)
        #expect(TrustedServerClock.trusted(served: monthAhead, anchor: anchor, localNow: local)
            == anchor.server.addingTimeInterval(3_600 + TrustedServerClock.tolerance))
        // An honest server within the tolerance, or behind: its own word.
        let honest = anchor.server.addingTimeInterval(3_600 + 30)
        #expect(TrustedServerClock.trusted(served: honest, anchor: anchor, localNow: local) == honest)
        let behind = anchor.server.addingTimeInterval(100)
        #expect(TrustedServerClock.trusted(served: behind, anchor: anchor, localNow: local) == behind)
        // The device's clock went back: no time has passed as far as the bound is concerned.
        #expect(TrustedServerClock.trusted(served: monthAhead, anchor: anchor, localNow: anchor.local.addingTimeInterval(-86_400))
            == anchor.server.addingTimeInterval(TrustedServerClock.tolerance))
        // A new device has no anchor: the server's word.
        #expect(TrustedServerClock.trusted(served: monthAhead, anchor: nil, localNow: local) == monthAhead)
    }
}

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

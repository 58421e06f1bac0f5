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

    @Test func everyIMFFixdateReadsAsFoundationWritesIt() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        var generator = SystemRandomNumberGenerator()
        // Leap days, year and century boundaries, then times spread over 1900–2400.
        let chosen: [TimeInterval] = [0, -1, 951_782_400, 951_868_799, 4_107_542_400, 4_107_628_800, 1_795_386_488, -2_208_988_800]
        let spread = (0..<2_000).map { _ in TimeInterval(Int64.random(in: -2_208_988_800...13_569_465_600, using: &generator)) }
        for seconds in chosen + spread {
            let text = formatter.string(from: Date(timeIntervalSince1970: seconds))
            #expect(ServerClock.parse(text) == Date(timeIntervalSince1970: seconds), "\(text)")
        }
    }

    @Test func anythingButAnIMFFixdateIsNotRead() {
        for text in [
            "", "Sun, 22 Nov 2026 22:28:08 UTC", "Sun, 22 Nov 2026 22:28:08 GMT ", "Sun 22 Nov 2026 22:28:08 GMT",
            "Sun, 22 Noe 2026 22:28:08 GMT", "Sun, 2x Nov 2026 22:28:08 GMT", "Sun, 32 Nov 2026 22:28:08 GMT",
            "Sun, 22 Nov 2026 24:28:08 GMT", "Sun, 22 Nov 2026 22:60:08 GMT", "Xyz, 22 Nov 2026 22:28:08 GMT",
            "Sunday, 22-Nov-26 22:28:08 GMT", "Sun Nov 22 22:28:08 2026", "Sun, 22 Nov 2026 22:28:08 GMT\u{0}",
        ] {
            #expect(ServerClock.parse(text) == nil, "\(text)")
        }
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

import Foundation
import Synchronization

/// Where the server reads the time: the system clock in production, a ``ManualClock`` in tests
/// (rate limits, device timestamps, tombstone collection).
package struct ServerClock: Sendable {
    package let now: @Sendable () -> Date

    package init(now: @escaping @Sendable () -> Date) {
        self.now = now
    }

    package static let system = ServerClock { Date() }
}

/// A clock that moves only when told: a shipped test double.
package final class ManualClock: Sendable {
    private let current: Mutex<Date>

    package init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = Mutex(start)
    }

    package var clock: ServerClock { ServerClock { self.current.withLock { $0 } } }

    package func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}

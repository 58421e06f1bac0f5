import Foundation
import Synchronization

/// The server's clock as this device can tell it: the `Date` header of the server's latest
/// answer, advanced by the monotonic time since it arrived (so a jump of the device's own clock
/// does not move it). Used to bound the modification times of local changes (decision 0108).
package final class ServerClock: Sendable {
    private let reading = Mutex<(server: Date, at: ContinuousClock.Instant)?>(nil)
    private let monotonic: @Sendable () -> ContinuousClock.Instant

    /// - Parameter monotonic: The monotonic clock (injected by tests).
    package init(monotonic: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }) {
        self.monotonic = monotonic
    }

    /// Takes the `Date` header (RFC 9110 IMF-fixdate) of an answer that just arrived; a header
    /// that cannot be read is ignored.
    package func record(dateHeader: String?) {
        guard let dateHeader, let server = Self.parse(dateHeader) else { return }
        let now = monotonic()
        reading.withLock { $0 = (server, now) }
    }

    /// The server's time now, or nil before any answer with a `Date` header.
    package func now() -> Date? {
        guard let (server, at) = reading.withLock({ $0 }) else { return nil }
        let elapsed = monotonic() - at
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        return server.addingTimeInterval(seconds)
    }

    static func parse(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.date(from: text)
    }
}

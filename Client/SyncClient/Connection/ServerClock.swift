import Foundation
import KeychainModel
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

    /// Reads an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 §5.6.7), the only form
    /// a server sends; nil for anything else. By hand: a `DateFormatter` loads the locale and
    /// time-zone data at every answer, a tenth of a quiet sync's time.
    package static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8), number = CivilCalendar.number
        guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == .space, bytes[7] == .space, bytes[11] == .space,
            bytes[16] == .space, bytes[19] == UInt8(ascii: ":"), bytes[22] == UInt8(ascii: ":"), bytes[25] == .space,
            bytes[26...] == Array("GMT".utf8)[...], weekdays.contains(bytes[0..<3]),
            let monthIndex = months.firstIndex(where: { $0 == bytes[8..<11] }),
            let day = number(bytes[5..<7]), let year = number(bytes[12..<16]), let hour = number(bytes[17..<19]),
            let minute = number(bytes[20..<22]), let second = number(bytes[23..<25]),
            (1...CivilCalendar.days(inMonth: Int64(monthIndex + 1), of: year)).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        let days = CivilCalendar.days(fromCivil: year, Int64(monthIndex + 1), day)
        return Date(timeIntervalSince1970: TimeInterval(((days * 24 + hour) * 60 + minute) * 60 + second))
    }

    private static let weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].map { Array($0.utf8)[...] }
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"].map { Array($0.utf8)[...] }

}

private extension UInt8 {
    static let space = UInt8(ascii: " ")
}

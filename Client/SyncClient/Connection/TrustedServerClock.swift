import Foundation
import Synchronization

/// The server's clock as far as this device trusts it, for the ages of statements (design §8:
/// ages on the device's own clocks, never on a time the server sends). The server's `Date` header
/// is taken only as far as this device's own clock has advanced since the time it last trusted
/// (its anchor, kept in the state file across restarts), plus a small tolerance: a server that
/// jumps its clock ahead cannot age the statements a device holds it to, and one that is behind
/// only makes them younger, which holds the server to more.
package final class TrustedServerClock: Sendable {
    /// A reading of both clocks: the server's time this device trusted, and its own then.
    package struct Anchor: Sendable, Equatable {
        package var server: Date
        package var local: Date

        package init(server: Date, local: Date) {
            self.server = server
            self.local = local
        }
    }

    /// How far the server's clock may run ahead of the anchor advanced by the device's own
    /// clock: the drift of two honest clocks between syncs.
    package static let tolerance: TimeInterval = 120

    /// The trusted time: `served` (the server's clock as the device reads it) unless it runs more
    /// than ``tolerance`` ahead of `anchor` advanced by the device's own clock since (never moved
    /// back by a jump of that clock), then that bound. Without an anchor (a new device) the
    /// server's word is all there is.
    package static func trusted(served: Date, anchor: Anchor?, localNow: Date) -> Date {
        guard let anchor else { return served }
        let elapsed = max(0, localNow.timeIntervalSince(anchor.local))
        return min(served, anchor.server.addingTimeInterval(elapsed + tolerance))
    }

    private let server: ServerClock
    private let database: ClientStateDatabase
    private let localNow: @Sendable () -> Date
    /// The anchor as read and last saved by this process.
    private let anchor = Mutex<(value: Anchor?, read: Bool)>((nil, false))

    /// The trusted clock of `server`'s readings, anchored in `database`.
    package init(server: ServerClock, database: ClientStateDatabase, localNow: @escaping @Sendable () -> Date = { Date() }) {
        self.server = server
        self.database = database
        self.localNow = localNow
    }

    /// The trusted time now (this device's own when the server has not answered yet); the
    /// anchor moves to it, saved at most once a minute of the device's own clock.
    package func now() -> Date {
        let local = localNow()
        guard let served = server.now() else { return local }
        return anchor.withLock { state in
            if !state.read {
                state.value = try? database.clockAnchor()
                state.read = true
            }
            let trusted = Self.trusted(served: served, anchor: state.value, localNow: local)
            if state.value.map({ local.timeIntervalSince($0.local) >= 60 || local < $0.local }) ?? true {
                let moved = Anchor(server: trusted, local: local)
                if (try? database.saveClockAnchor(moved)) != nil { state.value = moved }
            }
            return trusted
        }
    }
}

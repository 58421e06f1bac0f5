import Foundation
import Synchronization

/// Attempt counters in fixed windows, by key, on the server's clock: the state behind its rate
/// limiters.
final class FixedWindows: Sendable {
    private struct Window {
        var start: Date
        var count: Int
    }

    private let length: TimeInterval
    private let clock: ServerClock
    private let windows = Mutex<[String: Window]>([:])

    init(length: TimeInterval, clock: ServerClock) {
        self.length = length
        self.clock = clock
    }

    /// Counts one attempt for each key, all at once; true for each key whose window's count is
    /// still within its budget.
    func count(_ keys: [(key: String, budget: Int)]) -> [Bool] {
        let now = clock.now()
        return windows.withLock { windows in
            // Forget finished windows now and then so the table stays small.
            if windows.count > 100_000 {
                windows = windows.filter { isCurrent($0.value, now: now) }
            }
            return keys.map { key, budget in
                var entry = windows[key].flatMap { isCurrent($0, now: now) ? $0 : nil } ?? Window(start: now, count: 0)
                entry.count += 1
                windows[key] = entry
                return entry.count <= budget
            }
        }
    }

    /// The attempts counted for `key` in its current window.
    func current(_ key: String) -> Int {
        let now = clock.now()
        return windows.withLock { windows in
            windows[key].flatMap { isCurrent($0, now: now) ? $0.count : nil } ?? 0
        }
    }

    /// Whole seconds until `key`'s current window ends (at least 1), for `Retry-After`.
    func secondsLeft(_ key: String) -> Int {
        let now = clock.now()
        let start = windows.withLock { $0[key].flatMap { isCurrent($0, now: now) ? $0.start : nil } } ?? now
        return max(1, Int((length - now.timeIntervalSince(start)).rounded(.up)))
    }

    private func isCurrent(_ entry: Window, now: Date) -> Bool {
        now >= entry.start && now.timeIntervalSince(entry.start) < length
    }
}

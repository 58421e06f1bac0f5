import Foundation
import Synchronization

/// Fixed-window counters of sign-in attempts per account name and per client address; an attempt
/// over either budget is refused without touching the verifier.
final class SignInRateLimiter: Sendable {
    private struct Window {
        var start: Date
        var count: Int
    }

    private let limit: ServerConfiguration.SignInRateLimit
    private let clock: ServerClock
    private let windows = Mutex<[String: Window]>([:])

    init(limit: ServerConfiguration.SignInRateLimit, clock: ServerClock) {
        self.limit = limit
        self.clock = clock
    }

    /// Counts one attempt; false when the account's (if given) or the address's budget is spent.
    func allowAttempt(account: String?, address: String) -> Bool {
        let now = clock.now()
        return windows.withLock { windows in
            // Forget finished windows now and then so the table stays small.
            if windows.count > 100_000 {
                windows = windows.filter { now.timeIntervalSince($0.value.start) < limit.window }
            }
            let accountAllowed = account.map { Self.count("a:" + $0, budget: limit.attemptsPerAccount, now: now, window: limit.window, in: &windows) } ?? true
            let addressAllowed = Self.count("n:" + address, budget: limit.attemptsPerAddress, now: now, window: limit.window, in: &windows)
            return accountAllowed && addressAllowed
        }
    }

    private static func count(_ key: String, budget: Int, now: Date, window: TimeInterval, in windows: inout [String: Window]) -> Bool {
        var entry = windows[key] ?? Window(start: now, count: 0)
        if now.timeIntervalSince(entry.start) >= window || now < entry.start {
            entry = Window(start: now, count: 0)
        }
        entry.count += 1
        windows[key] = entry
        return entry.count <= budget
    }
}

import Synchronization

/// A count shared with a hook.
final class Counter: Sendable {
    private let count = Mutex(0)

    var value: Int { count.withLock { $0 } }

    /// Adds one and returns the new count.
    func increment() -> Int { count.withLock { $0 += 1; return $0 } }
}

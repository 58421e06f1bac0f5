import Foundation
import Synchronization

/// The run's one clock, in milliseconds: the server reads it as it is, each device with its skew.
final class SimulatedClock: Sendable {
    private let milliseconds = Atomic<Int64>(1_700_000_000_000)

    var now: Int64 { milliseconds.load(ordering: .relaxed) }

    func advance(by step: Int64) { milliseconds.add(step, ordering: .relaxed) }

    func date(skew: Int64 = 0) -> Date { Date(timeIntervalSince1970: Double(now + skew) / 1000) }
}

/// A value the run and the loopbacks' hooks share, behind a lock.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) { mutex = Mutex(value) }

    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T { try mutex.withLock { try body(&$0) } }

    var value: Value {
        get { mutex.withLock { $0 } }
        set { mutex.withLock { $0 = newValue } }
    }
}

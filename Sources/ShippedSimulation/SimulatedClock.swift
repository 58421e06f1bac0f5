import Foundation
import Synchronization

/// The run's one clock, in milliseconds: the server reads it as it is, each device with its skew.
final class SimulatedClock: Sendable {
    private let milliseconds = Atomic<Int64>(1_700_000_000_000)

    var now: Int64 { milliseconds.load(ordering: .relaxed) }

    func advance(by step: Int64) { milliseconds.add(step, ordering: .relaxed) }

    func date(skew: Int64 = 0) -> Date { Date(timeIntervalSince1970: Double(now + skew) / 1000) }
}

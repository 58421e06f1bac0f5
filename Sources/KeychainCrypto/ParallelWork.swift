import Dispatch

/// Pure work on many items (seals, HMACs), spread over every core once there are enough of them
/// to pay for it: what a first push of 10,000 items does at its ends, with the other core idle
/// (issue 35).
public enum ParallelWork {
    /// Below this many items the work is done in turn, on the caller's thread.
    public static let threshold = 1_000

    /// `work(0) … work(count − 1)`, in order.
    public static func results<Result: Sendable>(_ count: Int, _ work: @Sendable (Int) -> Result) -> [Result] {
        let lanes = count >= threshold ? 8 : 1
        guard lanes > 1 else { return (0..<count).map(work) }
        return [Result](unsafeUninitializedCapacity: count) { buffer, initialized in
            nonisolated(unsafe) let base = buffer.baseAddress!
            DispatchQueue.concurrentPerform(iterations: lanes) { lane in
                for index in stride(from: lane, to: count, by: lanes) { (base + index).initialize(to: work(index)) }
            }
            initialized = count
        }
    }
}

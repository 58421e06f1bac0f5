import Synchronization

/// Delivers change events to every subscriber of a store in this process, in commit order.
final class ChangeBroadcaster: Sendable {
    private struct Subscribers {
        var next: UInt64 = 0
        var byStore: [String: [UInt64: AsyncStream<KeyValueChange>.Continuation]] = [:]
    }

    private let subscribers = Mutex(Subscribers())

    func subscribe(store: String) -> AsyncStream<KeyValueChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: KeyValueChange.self, bufferingPolicy: .unbounded)
        let id = subscribers.withLock { state in
            state.next += 1
            state.byStore[store, default: [:]][state.next] = continuation
            return state.next
        }
        continuation.onTermination = { [weak self] _ in
            self?.subscribers.withLock { _ = $0.byStore[store]?.removeValue(forKey: id) }
        }
        return stream
    }

    func publish(_ change: KeyValueChange, store: String) {
        guard !change.keys.isEmpty else { return }
        for continuation in subscribers.withLock({ Array(($0.byStore[store] ?? [:]).values) }) {
            continuation.yield(change)
        }
    }
}

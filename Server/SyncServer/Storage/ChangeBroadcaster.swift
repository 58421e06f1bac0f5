import Foundation
import Synchronization

/// Fans committed changes out to every `listenForChanges` caller of one process. Backends call
/// ``publish(_:)`` after a commit; a shared-database backend also publishes what it hears from other
/// processes.
package final class ChangeBroadcaster: Sendable {
    private let listeners = Mutex<[UUID: AsyncStream<AccountChange>.Continuation]>([:])

    package init() {}

    package func publish(_ change: AccountChange) {
        for continuation in listeners.withLock({ Array($0.values) }) {
            continuation.yield(change)
        }
    }

    /// Calls `handler` for every published change until the task is cancelled.
    package func listen(_ handler: @escaping @Sendable (AccountChange) async -> Void) async {
        let id = UUID()
        let (stream, continuation) = AsyncStream<AccountChange>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        listeners.withLock { $0[id] = continuation }
        defer { _ = listeners.withLock { $0.removeValue(forKey: id) } }
        await withTaskCancellationHandler {
            for await change in stream {
                await handler(change)
            }
        } onCancel: {
            continuation.finish()
        }
    }
}

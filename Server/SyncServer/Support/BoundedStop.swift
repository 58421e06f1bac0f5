import PostgresNIO
import ServiceLifecycle
import Synchronization

/// Waits for `work` to end; once the caller is cancelled or its service group shuts down
/// gracefully, waits at most `grace` more, then returns and leaves `work` to end with the process.
///
/// For a dependency's run loop that is told to stop but has been seen not to finish: a server must
/// stop when it is asked to, and nothing after its stop needs that loop.
package func awaitEnd(of work: Task<Void, Never>, orStopWaitingAfter grace: Duration) async {
    let end = OnceResumed()
    Task {
        await work.value
        end.resume()
    }
    let stopWaiting: @Sendable () -> Void = {
        Task.detached {
            try? await Task.sleep(for: grace)
            end.resume()
        }
    }
    await withGracefulShutdownHandler {
        await withTaskCancellationHandler {
            await withCheckedContinuation(end.install)
        } onCancel: {
            work.cancel()
            stopWaiting()
        }
    } onGracefulShutdown: {
        stopWaiting()
    }
}

extension PostgresClient {
    /// Runs the pool until the task is cancelled or the service group shuts down, then gives it
    /// `grace` to close its connections. postgres-nio 1.33's pool has been seen not to finish
    /// stopping: a fresh-clone test run's live server waited for good in its stop, with no
    /// connection to PostgreSQL left open, and `sync-server` would then not exit on SIGTERM.
    package func run(stoppingWithin grace: Duration) async {
        let client = self
        await awaitEnd(of: Task { await client.run() }, orStopWaitingAfter: grace)
    }
}

/// A continuation resumed by the first of several callers, installed before or after that call.
private final class OnceResumed: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Void, Never>?
        var resumed = false
    }

    private let state = Mutex(State())

    func install(_ continuation: CheckedContinuation<Void, Never>) {
        let resumedAlready = state.withLock { state in
            if state.resumed { return true }
            state.continuation = continuation
            return false
        }
        if resumedAlready { continuation.resume() }
    }

    func resume() {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.resumed else { return nil }
            state.resumed = true
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume()
    }
}

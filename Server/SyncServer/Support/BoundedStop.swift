import ServiceLifecycle
import Synchronization

/// Waits for `work` to end; once the caller is cancelled or its service group shuts down
/// gracefully, waits at most `grace` more, then returns and leaves `work` to end with the process.
///
/// For a dependency's run loop that is told to stop but has been seen not to finish: a server must
/// stop when it is asked to, and nothing after its stop needs that loop.
package func awaitEnd(of work: Task<Void, Never>, orStopWaitingAfter grace: Duration) async {
    let end = OnceResumed()
    let stopWaiting: @Sendable () -> Void = {
        Task.detached {
            try? await Task.sleep(for: grace)
            end.resume()
        }
    }
    await withGracefulShutdownHandler {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                end.install(continuation)
                Task {
                    await work.value
                    end.resume()
                }
            }
        } onCancel: {
            work.cancel()
            stopWaiting()
        }
    } onGracefulShutdown: {
        stopWaiting()
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

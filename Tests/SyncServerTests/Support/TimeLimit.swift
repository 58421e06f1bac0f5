import Synchronization

/// Thrown by ``withTimeLimit(_:_:)`` when its body has not finished in time.
struct TimeLimitExceeded: Error, CustomStringConvertible {
    let limit: Duration
    /// Where the body was when the limit passed, when it says.
    var stage: String? = nil
    var description: String { "gave up waiting after \(limit)" + (stage.map { " (\($0))" } ?? "") }
}

/// Runs `body` and returns its result, or throws ``TimeLimitExceeded`` once `limit` has passed.
///
/// The limit measures nothing: it turns a wait that would never end (a push that never comes, a
/// stream nobody finishes) into a failed test instead of a stalled test run. It is generous because
/// every suite starts at once and shares the cooperative pool's two threads: in a full run on this
/// project's machines a push test that takes half a second alone took 115-195 s, most of it
/// waiting for a thread (the 180 s this default was is too near). It stays under a live server's
/// whole bound (600 s), so a stall names its own wait. When the limit passes, `body` is cancelled
/// and not waited for, so a body that ignores cancellation cannot stall the run either. `stage`,
/// read when the limit passes, says where the body was for the failure's message.
func withTimeLimit<T: Sendable>(
    _ limit: Duration = .seconds(400), stage: (@Sendable () -> String)? = nil, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let outcome = FirstOutcome(continuation)
        let work = Task {
            do {
                outcome.resume(with: .success(try await body()))
            } catch {
                outcome.resume(with: .failure(error))
            }
        }
        let timer = Task {
            guard (try? await Task.sleep(for: limit)) != nil else { return }
            outcome.resume(with: .failure(TimeLimitExceeded(limit: limit, stage: stage?())))
            work.cancel()
        }
        outcome.whenResumed { timer.cancel() }
    }
}

/// Resumes a continuation with whichever outcome comes first and ignores the rest.
private final class FirstOutcome<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var onResume: (@Sendable () -> Void)?
    }

    private let state: Mutex<State>

    init(_ continuation: CheckedContinuation<T, any Error>) {
        state = Mutex(State(continuation: continuation))
    }

    func resume(with result: Result<T, any Error>) {
        let (continuation, onResume) = state.withLock { state in
            defer { state = State() }
            return (state.continuation, state.onResume)
        }
        continuation?.resume(with: result)
        onResume?()
    }

    /// Runs `action` once the continuation is resumed (at once if it already was).
    func whenResumed(_ action: @escaping @Sendable () -> Void) {
        let alreadyResumed = state.withLock { state in
            guard state.continuation != nil else { return true }
            state.onResume = action
            return false
        }
        if alreadyResumed { action() }
    }
}

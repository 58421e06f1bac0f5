import Dispatch
import Synchronization
import SyncServer
import Testing

/// ``awaitEnd(of:orStopWaitingAfter:)``: what `PostgresStorage.run` stops the pool with.
@Suite struct BoundedStopTests {
    /// Work that takes an hour and does not end when cancelled, as a stuck run loop does.
    static func stuck() -> Task<Void, Never> {
        Task {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().asyncAfter(deadline: .now() + 3600) { continuation.resume() }
            }
        }
    }

    @Test func aStuckLoopIsLeftOnceTheGraceHasPassedAfterCancellation() async throws {
        let waiting = Task { await awaitEnd(of: Self.stuck(), orStopWaitingAfter: .milliseconds(100)) }
        waiting.cancel()
        // Bounded: without the grace this waits the hour.
        try await withTimeLimit(.seconds(60)) { await waiting.value }
    }

    @Test func workThatEndsIsWaitedFor() async throws {
        let ended = Task { _ = try? await Task.sleep(for: .milliseconds(50)) }
        try await withTimeLimit(.seconds(60)) { await awaitEnd(of: ended, orStopWaitingAfter: .seconds(3600)) }
        #expect(ended.isCancelled == false)
    }

    @Test func aLoopThatStopsWhenCancelledIsWaitedForNotLeft() async throws {
        let finished = Mutex(false)
        let loop = Task {
            while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(10)) }
            finished.withLock { $0 = true }
        }
        let waiting = Task { await awaitEnd(of: loop, orStopWaitingAfter: .seconds(3600)) }
        waiting.cancel()
        try await withTimeLimit(.seconds(60)) { await waiting.value }
        #expect(finished.withLock { $0 })
    }
}

/// A coalescing wake-up signal: any number of rings while nobody waits make one wake-up.
package struct Doorbell: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    package init() {
        (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    package func ring() { continuation.yield() }

    /// Waits for the next ring; returns false once finished or cancelled.
    package func wait() async -> Bool {
        var iterator = stream.makeAsyncIterator()
        return await iterator.next() != nil
    }

    package func finish() { continuation.finish() }
}

#if SYNCKEYCHAIN_NETWORK
import Hummingbird
import Logging

/// A minimal in-process Hummingbird server on loopback (plain HTTP) for the baselines of the
/// device figures.
enum PlainHTTPServer {
    /// Runs `body` with the base URL of a server answering with `router`, then stops the server.
    static func with<T: Sendable>(_ router: Router<BasicRequestContext>, _ body: @Sendable (String) async throws -> T) async throws -> T {
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                portSink.yield(channel.localAddress?.port ?? 0)
                portSink.finish()
            },
            logger: Logger(label: "plain-http") { _ in SwiftLogNoOpLogHandler() })
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                try await application.runService(gracefulShutdownSignals: [])
                return nil
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next(), port > 0 else { throw BenchmarkError("the plain HTTP server did not start") }
            let result = try await body("http://127.0.0.1:\(port)")
            group.cancelAll()
            return result
        }
    }
}
#endif

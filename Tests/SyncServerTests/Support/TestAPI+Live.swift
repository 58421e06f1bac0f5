import HummingbirdTesting
import ServiceLifecycle
import SyncServer

extension TestAPI {
    struct ServerDidNotStart: Error {}

    /// Runs this server on a port of its own (plain HTTP) until `body` ends, and hands `body` a
    /// client on one keep-alive connection and the port.
    ///
    /// Not HummingbirdTesting's `.live`: its client gives up on a request after 20 s without a
    /// byte, which a full test run on two cores has exceeded; here an answer may take two minutes.
    /// Bounded as the router tests are (``TestAPI/with(_:_:_:)``): a stall fails the test and
    /// names it, where a stalled run names nothing.
    func live(_ body: @escaping @Sendable (APIClient, Int) async throws -> Void) async throws {
        let application = application
        try await withTimeLimit(.seconds(600)) { try await Self.live(application, body) }
    }

    private static func live(_ application: SyncApplication, _ body: @escaping @Sendable (APIClient, Int) async throws -> Void) async throws {
        let (ports, bound) = AsyncStream.makeStream(of: Int.self)
        let app = try application.makeApplication(host: "127.0.0.1", port: 0, tls: nil) { bound.yield($0) }
        var configuration = ServiceGroupConfiguration(services: [app], logger: application.logger)
        // Bounded: a connection a test left open cancels the server after this instead of holding
        // its graceful shutdown, and the whole test run, for good.
        configuration.maximumGracefulShutdownDuration = .seconds(60)
        let services = ServiceGroup(configuration: configuration)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                defer { bound.finish() }
                try await services.run()
            }
            guard let port = await ports.first(where: { _ in true }) else {
                try await tasks.waitForAll()
                throw ServerDidNotStart()
            }
            let connection = TestClient(host: "127.0.0.1", port: port, configuration: .init(timeout: .seconds(120)))
            connection.connect()
            var failure: (any Error)?
            do { try await body(APIClient(connection: connection), port) } catch { failure = error }
            try? await connection.shutdown()
            await services.triggerGracefulShutdown()
            try await tasks.waitForAll()
            if let failure { throw failure }
        }
    }
}

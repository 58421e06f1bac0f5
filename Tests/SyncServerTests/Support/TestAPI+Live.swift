import HummingbirdTesting
import ServiceLifecycle
import SyncServer
import Synchronization

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
        let stage = Stage()
        try await withTimeLimit(.seconds(600), stage: { stage.description }) { try await Self.live(application, stage, body) }
    }

    /// Where a live test is, for the message of one that stalls: a fresh-clone run once spent its
    /// 600 s in one of these and said only that it gave up.
    private final class Stage: Sendable, CustomStringConvertible {
        private let state = Mutex((now: "starting the server", bodyFailure: String?.none))

        func enter(_ stage: String) { state.withLock { $0.now = stage } }
        func bodyFailed(_ error: any Error) { state.withLock { $0.bodyFailure = "\(error)" } }

        var description: String {
            state.withLock { state in "while \(state.now)" + (state.bodyFailure.map { "; the test had failed: \($0)" } ?? "") }
        }
    }

    private static func live(
        _ application: SyncApplication, _ stage: Stage, _ body: @escaping @Sendable (APIClient, Int) async throws -> Void
    ) async throws {
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
            stage.enter("running the test")
            do { try await body(APIClient(connection: connection), port) } catch {
                failure = error
                stage.bodyFailed(error)
            }
            stage.enter("closing the test's connection")
            try? await connection.shutdown()
            stage.enter("stopping the server (graceful shutdown, then cancellation after 60 s)")
            await services.triggerGracefulShutdown()
            try await tasks.waitForAll()
            if let failure { throw failure }
        }
    }
}

import Logging
import PostgresNIO

extension PostgresStorage {
    /// LISTENs on ``PostgresChangeNotification/channel`` on one pooled connection, held
    /// throughout, and calls `handler` for every upload any process committed on this database
    /// (this one included: its own NOTIFYs come back the same way). Reconnects with backoff when the connection drops; a
    /// notification sent while it is down is lost, which clients cover by polling (push is a hint).
    ///
    /// Its connection comes from the pool, which must be running (see ``PostgresStorage``); the
    /// listener never runs or stops the pool.
    package func listenForChanges(_ handler: @escaping @Sendable (AccountChange) async -> Void) async throws {
        var attempt = 0
        while !Task.isCancelled {
            do {
                try await client.withConnection { connection in
                    try await connection.listen(on: PostgresChangeNotification.channel) { notifications in
                        attempt = 0
                        for try await notification in notifications {
                            guard let change = PostgresChangeNotification.change(from: notification.payload) else {
                                continue
                            }
                            await handler(change)
                        }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                attempt += 1
                logger.warning(
                    "PostgreSQL change listener lost its connection; retrying",
                    metadata: ["attempt": "\(attempt)", "error": "\(String(reflecting: type(of: error)))"]
                )
                try? await Task.sleep(for: .milliseconds(min(5_000, 100 << min(attempt, 6))))
            }
        }
    }
}

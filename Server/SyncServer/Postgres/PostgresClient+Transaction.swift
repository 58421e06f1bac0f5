import Logging
import PostgresNIO

extension PostgresClient {
    /// Runs `body` in one transaction on one pooled connection: COMMIT when it returns, ROLLBACK
    /// when it throws. Unlike PostgresNIO's `withTransaction`, the body's own error is rethrown
    /// unwrapped, so storage errors (limits, unknown account) reach the caller as they were thrown.
    func inTransaction<Result: Sendable>(
        logger: Logger,
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await withConnection { connection in
            try await connection.query("BEGIN", logger: logger)
            let result: Result
            do {
                result = try await body(connection)
            } catch {
                // A failed ROLLBACK means the connection is broken; the pool drops it.
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
            try await connection.query("COMMIT", logger: logger)
            return result
        }
    }
}

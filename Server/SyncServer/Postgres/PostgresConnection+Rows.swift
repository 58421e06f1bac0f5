import Logging
import PostgresNIO

extension PostgresConnection {
    /// Runs `query` and returns its rows (the async overload, which `query` alone leaves ambiguous
    /// next to the `EventLoopFuture` one when the result is chained).
    func rows(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence {
        try await self.query(query, logger: logger)
    }
}

extension AsyncSequence {
    /// Every element, in order.
    func all() async throws -> [Element] {
        var elements: [Element] = []
        for try await element in self {
            elements.append(element)
        }
        return elements
    }
}

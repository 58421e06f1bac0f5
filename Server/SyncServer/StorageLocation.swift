import Foundation

/// Where the server keeps its data: a directory for the embedded SQLite database, or a database
/// URL whose scheme picks the backend (`postgres://…` is wired by the PostgreSQL backend, which
/// adds its opener to ``openers``).
package enum StorageLocation: Sendable {
    case directory(URL)
    case database(URL)

    /// Opens a storage for a database URL, by scheme.
    package typealias Opener = @Sendable (URL) async throws -> any ServerStorage

    /// The backends reachable by URL; the PostgreSQL backend registers "postgres" and "postgresql".
    package static var openers: [String: Opener] {
        ["postgres": PostgresStorage.open, "postgresql": PostgresStorage.open]
    }

    package func open() async throws -> any ServerStorage {
        switch self {
        case .directory(let url):
            return try SQLiteStorage(directory: url)
        case .database(let url):
            guard let scheme = url.scheme?.lowercased(), let opener = Self.openers[scheme] else {
                throw SyncServerError(.startupFailure, "no storage backend for the database URL's scheme")
            }
            return try await opener(url)
        }
    }
}

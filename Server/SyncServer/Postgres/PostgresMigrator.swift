import Logging
import PostgresNIO

/// Brings a database's schema up to date: numbered migrations, each applied once, all in one
/// transaction that holds a transaction-scoped advisory lock, so several `sync-server` processes
/// starting at once on one database apply them exactly once (the others wait, then find nothing
/// left to do).
struct PostgresMigrator {
    struct Migration: Sendable {
        var version: Int
        var statements: [PostgresQuery]
    }

    /// The advisory lock key: any fixed 64-bit number no other application on the database uses.
    static let lockKey: Int64 = 0x5379_6E63_4B43_0001

    var migrations: [Migration]

    /// Applies the missing migrations; returns the versions it applied.
    @discardableResult
    func migrate(_ client: PostgresClient, logger: Logger) async throws -> [Int] {
        try await client.inTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.lockKey))", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version integer PRIMARY KEY,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """,
                logger: logger
            )
            var applied: Set<Int> = []
            for try await version in try await connection.rows(
                "SELECT version FROM schema_migrations", logger: logger
            ).decode(Int.self) {
                applied.insert(version)
            }
            var newlyApplied: [Int] = []
            for migration in migrations.sorted(by: { $0.version < $1.version })
            where !applied.contains(migration.version) {
                for statement in migration.statements {
                    try await connection.query(statement, logger: logger)
                }
                try await connection.query(
                    "INSERT INTO schema_migrations (version) VALUES (\(migration.version))", logger: logger
                )
                newlyApplied.append(migration.version)
                logger.info("applied PostgreSQL schema migration", metadata: ["version": "\(migration.version)"])
            }
            return newlyApplied
        }
    }
}

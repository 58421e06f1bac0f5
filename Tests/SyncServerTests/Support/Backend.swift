import Foundation
import Logging
import ProcessTesting
import SyncServer
import Testing

/// A storage backend for the suites that run every endpoint on each: SQLite and the in-memory
/// reference always, PostgreSQL when `SYNCKEYCHAIN_TEST_POSTGRES_URL` names a server (one server
/// for the whole test run, a fresh database on it per test).
enum Backend: String, Sendable, CustomTestStringConvertible {
    case sqlite, memory, postgres

    static let all: [Backend] = PostgresTestCluster.configuredAdministration == nil ? [.sqlite, .memory] : [.sqlite, .memory, .postgres]

    var testDescription: String { rawValue }

    /// Runs `body` with a fresh, empty storage of this backend. With `runningServices` the storage's
    /// services (PostgreSQL's connection pool) run meanwhile; without, the caller runs them (a live
    /// application registers them in its own service group).
    func withStorage<Result: Sendable>(
        runningServices: Bool = true, _ body: (any ServerStorage) async throws -> Result
    ) async throws -> Result {
        switch self {
        case .sqlite:
            return try await withTemporaryDirectory { directory in
                try await Self.running(try SQLiteStorage(directory: directory), runningServices, body)
            }
        case .memory:
            return try await Self.running(MemoryStorage(), runningServices, body)
        case .postgres:
            let administration = try #require(PostgresTestCluster.configuredAdministration)
            return try await PostgresTestCluster.$administration.withValue(administration) {
                try await PostgresTestCluster.withFreshDatabase { location in
                    // Migrated through a short-lived storage, as `PostgresStorage.open` does, so
                    // that this one's pool has not run yet.
                    try await PostgresTestCluster.withStorage(location) { _ in }
                    return try await Self.running(PostgresTestCluster.makeStorage(location), runningServices, body)
                }
            }
        }
    }

    private static func running<Result: Sendable>(
        _ storage: any ServerStorage, _ runningServices: Bool, _ body: (any ServerStorage) async throws -> Result
    ) async throws -> Result {
        guard runningServices else { return try await body(storage) }
        return try await withThrowingTaskGroup(of: Void.self) { group in
            for service in storage.services {
                group.addTask { try await service.run() }
            }
            defer { group.cancelAll() }
            return try await body(storage)
        }
    }
}

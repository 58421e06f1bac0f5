import DurableSQLite
import Foundation
import GRDB
import ServiceLifecycle
import SyncCore

/// The default backend: one SQLite database (GRDB, WAL, `synchronous=FULL`) in the data directory.
///
/// Writes go through GRDB's single writer, so each method's check-then-write runs in one
/// serialized transaction; reads run concurrently on the pool's readers.
package final class SQLiteStorage: ServerStorage {
    /// The database file's name inside the data directory.
    package static let fileName = "sync.sqlite"

    let pool: DatabasePool
    let directory: URL
    let broadcaster = ChangeBroadcaster()
    /// The most collected deletions kept per zone (rule R10a); the simulation draws fewer.
    let collectedDeletionBound: Int

    /// Opens (creating and migrating when needed) the database in `directory`, which is created
    /// 0700 if missing; the database file is created 0600 (SQLite gives its WAL and shared-memory
    /// files the same mode).
    package init(directory: URL, collectedDeletionBound: Int = FeedRule.maximumCollectedDeletions) throws {
        self.directory = directory
        self.collectedDeletionBound = collectedDeletionBound
        let path = directory.appendingPathComponent(Self.fileName).path
        do {
            try PrivateFile.createDirectory(directory)
            if !FileManager.default.fileExists(atPath: path) {
                try PrivateFile.write([], to: path)
            }
            // A commit reaches the disk before the upload is acknowledged (decision 0043).
            pool = try DurableSQLite.pool(path: path, label: "sync-server")
            try Self.migrator.migrate(pool)
        } catch let error as SyncServerError {
            throw error
        } catch {
            throw SyncServerError(.startupFailure, "cannot open the SQLite database", underlying: error)
        }
    }

    /// SQLite's `synchronous` setting of the writer connection (2 is FULL), for tests.
    package func synchronousSetting() async throws -> Int {
        try await pool.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1 }
    }

    /// Runs a write transaction, mapping database failures to `storageFailure`.
    func write<T: Sendable>(_ what: String, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await mappingFailures(what) { try await pool.write(body) }
    }

    /// Runs a read, mapping database failures to `storageFailure`.
    func read<T: Sendable>(_ what: String, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await mappingFailures(what) { try await pool.read(body) }
    }

    private func mappingFailures<T>(_ what: String, _ access: () async throws -> T) async throws -> T {
        do {
            return try await access()
        } catch let error as SyncServerError {
            throw error
        } catch {
            throw SyncServerError(.storageFailure, "\(what) failed", underlying: error)
        }
    }

    /// Nothing runs beside an SQLite storage.
    package var services: [any Service] { [] }

    package func listenForChanges(_ handler: @escaping @Sendable (AccountChange) async -> Void) async throws {
        await broadcaster.listen(handler)
    }
}

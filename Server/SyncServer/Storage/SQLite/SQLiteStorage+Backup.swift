import Foundation
import GRDB

extension SQLiteStorage {
    /// What a backup or restore copied.
    package struct BackupSummary: Sendable, Equatable {
        package var accounts: Int
        package var items: Int
        package var bytes: Int
    }

    /// Copies the database in `directory` to `file` with SQLite's online backup API, in one read
    /// transaction: a consistent snapshot while servers keep writing. `file` must not exist; it is
    /// created 0600 (exclusively: an existing file is never written over, decision 0262).
    package static func backup(directory: URL, to file: URL) throws -> BackupSummary {
        let source = directory.appendingPathComponent(fileName)
        guard FileManager.default.fileExists(atPath: source.path) else {
            throw SyncServerError(.notFound, "no sync-server database in \(directory.path)")
        }
        do {
            try PrivateFile.createNew(file.path)
        } catch let error as SyncServerError where error.message.hasSuffix("exists already") {
            // Never written over: it may be an earlier backup.
            throw SyncServerError(.startupFailure, "\(file.path) exists already; a backup goes to a new file: choose another name (nothing was written)")
        }
        do {
            let pool = try DatabasePool(path: source.path, configuration: readOnly)
            let destination = try DatabaseQueue(path: file.path)
            try pool.backup(to: destination)
            return try summary(of: destination)
        } catch let error as SyncServerError {
            throw error
        } catch {
            try? FileManager.default.removeItem(at: file)
            throw SyncServerError(.storageFailure, "the backup failed", underlying: error)
        }
    }

    /// Replaces the database in `directory` (created when missing) with the backup `file`, after
    /// checking that the file is an intact sync-server database; migrates it to this version and
    /// moves every account's sequence on by ``ChangeFeed/restoredSequenceJump``, remembering where
    /// the backup ended (decision 0154). Every server process on the directory must be stopped
    /// first: the restore refuses while one holds the directory's ``ServingLock`` (decision 0262).
    package static func restore(from file: URL, into directory: URL) throws -> BackupSummary {
        let lock = try ServingLock.restoring(directory)
        defer { withExtendedLifetime(lock) {} }
        guard FileManager.default.isReadableFile(atPath: file.path) else {
            throw SyncServerError(.notFound, "cannot read \(file.path)")
        }
        do {
            let backup = try DatabaseQueue(path: file.path, configuration: readOnly)
            let check = try backup.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") }
            let tables = try backup.read { db in try db.tableExists("account") && db.tableExists("item") }
            guard check == ["ok"], tables else {
                throw SyncServerError(.startupFailure, "the file is not an intact sync-server database; nothing was restored")
            }
            let storage = try SQLiteStorage(directory: directory)
            try backup.backup(to: storage.pool)
            try migrator.migrate(storage.pool)
            try storage.pool.write { db in
                try db.execute(
                    sql: "UPDATE account SET restoredThrough = latestSequence, latestSequence = latestSequence + ?",
                    arguments: [ChangeFeed.restoredSequenceJump])
            }
            return try summary(of: storage.pool)
        } catch let error as SyncServerError {
            throw error
        } catch {
            throw SyncServerError(.storageFailure, "the restore failed", underlying: error)
        }
    }

    private static var readOnly: Configuration {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        return configuration
    }

    private static func summary(of database: some DatabaseReader) throws -> BackupSummary {
        try database.read { db in
            BackupSummary(
                accounts: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM account") ?? 0,
                items: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item") ?? 0,
                bytes: try Int.fetchOne(db, sql: "SELECT COALESCE(SUM(storedBytes), 0) FROM account") ?? 0)
        }
    }
}

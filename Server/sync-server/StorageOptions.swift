import ArgumentParser
import Foundation
import SyncServer

/// The storage flags the operator commands share with the server (`--data-dir`, `--database`).
struct StorageOptions: ParsableArguments {
    static let defaultDataDirectory = "./sync-data"

    @Option(help: "The data directory of the embedded SQLite database (default: ./sync-data).") var dataDir: String?
    @Option(help: "A database URL instead of the embedded SQLite database (postgres://…).") var database: String?

    var directory: URL { URL(fileURLWithPath: dataDir ?? Self.defaultDataDirectory, isDirectory: true) }

    /// Refuses an embedded database that is not there: an operator command reads or changes a
    /// server's data and creates none (a mistyped or forgotten `--data-dir` used to create an
    /// empty `./sync-data` and answer from it, decision 0262).
    func requireExistingDatabase() throws {
        guard database == nil else { return }
        let file = directory.appendingPathComponent(SQLiteStorage.fileName).path
        guard !FileManager.default.fileExists(atPath: file) else { return }
        if dataDir == nil {
            throw OperatorError("no \(Self.defaultDataDirectory) here with a sync-server database; name the server's storage with --data-dir DIR or --database URL")
        }
        throw OperatorError("no sync-server database in \(directory.path); check --data-dir (or give --database URL)")
    }

    var location: StorageLocation {
        get throws {
            guard let database else { return .directory(directory) }
            guard let url = URL(string: database) else { throw ValidationError("--database must be a URL") }
            return .database(url)
        }
    }

    /// Refuses a PostgreSQL database for backup and restore, which belong to PostgreSQL's own tools.
    func requireSQLite(_ command: String) throws {
        guard database == nil else {
            throw ValidationError("""
                \(command) copies the embedded SQLite database; for PostgreSQL use pg_dump --format=custom \
                and pg_restore --clean (docs/operations.md)
                """)
        }
    }
}

/// `sync-server backup FILE`: a consistent copy of the SQLite database while the server runs.
struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup", abstract: "Copy the SQLite database to FILE (online: servers may keep running).")

    @OptionGroup var storage: StorageOptions
    @Argument(help: "The backup file to create (must not exist: an existing file is never written over).") var file: String

    func run() throws {
        try storage.requireSQLite("backup")
        try storage.requireExistingDatabase()
        let summary = try SQLiteStorage.backup(directory: storage.directory, to: URL(fileURLWithPath: file))
        print("backed up \(summary.accounts) accounts, \(summary.items) items, \(summary.bytes) bytes to \(file)")
    }
}

/// `sync-server restore FILE`: rolls the SQLite database back to a backup.
struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Replace the SQLite database with the backup FILE (refused while a server serves the data directory: stop it first).")

    @OptionGroup var storage: StorageOptions
    @Argument(help: "The backup file made by `sync-server backup`.") var file: String

    func run() throws {
        try storage.requireSQLite("restore")
        let summary = try SQLiteStorage.restore(from: URL(fileURLWithPath: file), into: storage.directory)
        print("restored \(summary.accounts) accounts, \(summary.items) items, \(summary.bytes) bytes from \(file)")
        print("devices push what the backup lacks at their next sync; each reports the rollback once")
    }
}

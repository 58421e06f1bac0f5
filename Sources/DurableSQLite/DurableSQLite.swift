import Foundation
import GRDB

/// How the product opens its SQLite files — the key-value stores, the sync state, the server's
/// database — so that each keeps the same promises: the file is the owner's alone (0600, created
/// so by `open(2)`, its directory 0700 when created), WAL, a ten-second busy timeout, and every
/// commit on disk before it returns (`synchronous = FULL`, decisions 0013, 0043). The keychain's
/// own file is opened by `Keychain`, which tunes the same promises for one-shot processes
/// (decision 0160).
public enum DurableSQLite {
    /// How long a connection waits for another process's write lock.
    public static let busyTimeout: TimeInterval = 10

    /// Creates the file at `path` readable and writable by its owner only, if it is missing, and
    /// its directory (0700) if that is missing.
    public static func createPrivateFile(atPath path: String) throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty && !FileManager.default.fileExists(atPath: directory) {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, "errno": errno]) }
        fchmod(descriptor, 0o600)
        close(descriptor)
    }

    /// The connection settings: WAL, the busy timeout, `label` for GRDB's diagnostics; with
    /// `zeroFreedPages`, deleted content is overwritten and temporary tables stay in memory.
    public static func configuration(label: String, zeroFreedPages: Bool) -> Configuration {
        var configuration = Configuration()
        configuration.journalMode = .wal
        configuration.busyMode = .timeout(busyTimeout)
        configuration.label = label
        if zeroFreedPages {
            configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA secure_delete = ON; PRAGMA temp_store = MEMORY") }
        }
        return configuration
    }

    /// Opens the database at `path` (an existing private file) with one connection.
    public static func queue(path: String, label: String, zeroFreedPages: Bool = false) throws -> DatabaseQueue {
        let queue = try DatabaseQueue(path: path, configuration: configuration(label: label, zeroFreedPages: zeroFreedPages))
        try makeCommitsDurable(queue)
        return queue
    }

    /// Opens the database at `path` (an existing private file) with a writer and concurrent readers.
    public static func pool(path: String, label: String, zeroFreedPages: Bool = false) throws -> DatabasePool {
        let pool = try DatabasePool(path: path, configuration: configuration(label: label, zeroFreedPages: zeroFreedPages))
        try makeCommitsDurable(pool)
        return pool
    }

    /// `synchronous = FULL` on the writing connection, set after opening: GRDB sets NORMAL on WAL
    /// databases after `prepareDatabase`.
    private static func makeCommitsDurable(_ writer: some DatabaseWriter) throws {
        try writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
    }
}

import Foundation
import GRDB

/// How the product opens its SQLite files — the key-value stores, the sync state, the server's
/// database — so that each keeps the same promises: the file is the owner's alone (0600, created
/// so by `open(2)`, its directory 0700 when created), WAL, a ten-second busy timeout, and every
/// commit on disk before it returns (`synchronous = FULL`, decisions 0013, 0043). The keychain's
/// own file is opened by `Keychain`, which tunes the same promises for one-shot processes
/// (decision 0160). Each refuses a path, or a file SQLite keeps beside it, that is there but is not
/// a regular file (``FileKind``) before opening anything.
public enum DurableSQLite {
    /// How long a connection waits for another process's write lock.
    public static let busyTimeout: TimeInterval = 10

    /// The files SQLite may keep beside the database at `path`.
    public static func companionPaths(of path: String) -> [String] {
        [path + "-wal", path + "-shm", path + "-journal"]
    }

    /// Refuses `path` or one of its ``companionPaths(of:)`` when it is there and is not a regular
    /// file (a FIFO would block the opener, a device would be written to).
    /// - Throws: ``NotARegularFile``.
    public static func requireRegularFiles(_ path: String) throws(NotARegularFile) {
        for file in [path] + companionPaths(of: path) {
            if let refusal = FileKind(atPath: file).refusal("the database file", file) { throw NotARegularFile(refusal) }
        }
    }

    /// Creates the file at `path` readable and writable by its owner only, if it is missing, and
    /// its directory (0700) if that is missing; makes an existing regular file 0600.
    /// - Throws: ``NotARegularFile`` when `path` or a companion is there and is not a regular
    ///   file: nothing is then opened for writing, and no mode changed.
    public static func createPrivateFile(atPath path: String) throws {
        try requireRegularFiles(path)
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty && !FileManager.default.fileExists(atPath: directory) {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        // Non-blocking: a FIFO put there since the check fails to open instead of waiting.
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0o600)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path, "errno": errno]) }
        defer { close(descriptor) }
        if let refusal = FileKind(descriptor: descriptor).refusal("the database file", path) { throw NotARegularFile(refusal) }
        fchmod(descriptor, 0o600)
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
    /// - Throws: ``NotARegularFile`` before opening, for a path or companion that is not a
    ///   regular file; GRDB's errors.
    public static func queue(path: String, label: String, zeroFreedPages: Bool = false) throws -> DatabaseQueue {
        try requireRegularFiles(path)
        let queue = try DatabaseQueue(path: path, configuration: configuration(label: label, zeroFreedPages: zeroFreedPages))
        try makeCommitsDurable(queue)
        return queue
    }

    /// Opens the database at `path` (an existing private file) with a writer and concurrent readers.
    /// - Throws: ``NotARegularFile`` before opening, for a path or companion that is not a
    ///   regular file; GRDB's errors.
    public static func pool(path: String, label: String, zeroFreedPages: Bool = false) throws -> DatabasePool {
        try requireRegularFiles(path)
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

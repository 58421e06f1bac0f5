#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How a process that writes a database tells the processes that watch it (the sync daemon, the
/// Secret Service) that a write committed (decision 0268): after each commit, one byte is written
/// to a file beside the database, `DATABASE-changed` (0600). The watchers wait for that file's
/// inotify events, never for the database's or its write-ahead log's: those come while the commit
/// is being written, before another connection can see it, and a process that keeps the database
/// open gives no later event (its close), so a watcher that looked then found nothing and slept
/// through the write.
///
/// Posted by the one function each store runs its write transactions through, so every write
/// path (the CLI, the Secret Service, import, history restore, a sync's apply, lock and unlock)
/// posts it and none can forget.
public struct ChangeNotice: Sendable {
    /// The file written after each commit.
    public let path: String

    /// The notice of the database at `databasePath`.
    public init(databasePath: String) { path = databasePath + "-changed" }

    /// The notice file's name, for a watcher of the database's directory.
    public var fileName: String { path.split(separator: "/").last.map(String.init) ?? path }

    /// Tells the watchers that a write committed. Best effort and never blocking: a file that
    /// cannot be written (a read-only directory), or that is not a regular file (a FIFO, a link),
    /// is left alone; the watchers' periodic checks still find the write.
    public func post() {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        guard case .regular = FileKind(descriptor: descriptor) else { return }
        var byte: UInt8 = 1
        _ = pwrite(descriptor, &byte, 1, 0)
    }
}

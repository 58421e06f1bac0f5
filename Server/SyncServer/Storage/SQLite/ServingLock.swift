import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `serving.lock` in a SQLite data directory, held with flock(2) for the life of the process:
/// shared by every server serving the directory, exclusive by a restore, so that a restore
/// refuses while a server serves the database it would replace, and a server does not start in
/// the middle of a restore (decision 0262). The kernel releases it when the process ends, however
/// it ends.
package final class ServingLock: Sendable {
    package static let fileName = "serving.lock"
    private let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }

    /// The lock of a server that serves `directory` (created 0700 when missing).
    /// - Throws: `startupFailure` while a restore runs on the directory.
    package static func serving(_ directory: URL) throws -> ServingLock {
        try take(directory, exclusive: false) {
            "a restore is running on \(directory.path); start the server once it has finished"
        }
    }

    /// The lock of a restore into `directory` (created 0700 when missing).
    /// - Throws: `startupFailure` while a server serves the directory (or another restore runs).
    package static func restoring(_ directory: URL) throws -> ServingLock {
        try take(directory, exclusive: true) {
            "a sync-server is serving \(directory.path) (or a restore runs there); stop it first: the restore replaces the database under it"
        }
    }

    private static func take(_ directory: URL, exclusive: Bool, held: () -> String) throws -> ServingLock {
        try PrivateFile.createDirectory(directory)
        let path = directory.appendingPathComponent(fileName).path
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw SyncServerError(.startupFailure, "cannot open \(path) (errno \(errno))") }
        var result: Int32
        repeat {
            result = flock(descriptor, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB)
        } while result != 0 && errno == EINTR
        guard result == 0 else {
            let code = errno
            close(descriptor)
            if code == EWOULDBLOCK { throw SyncServerError(.startupFailure, held()) }
            throw SyncServerError(.startupFailure, "cannot lock \(path) (errno \(code))")
        }
        return ServingLock(descriptor: descriptor)
    }
}

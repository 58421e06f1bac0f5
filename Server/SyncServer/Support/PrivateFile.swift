import Foundation

/// Files only the server's user may read: created 0600 by `open(2)` itself, so they are never
/// world-readable, not even briefly.
package enum PrivateFile {
    /// Creates (or truncates) `path` with `bytes`, flushed to disk.
    package static func write(_ bytes: some Sequence<UInt8>, to path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else {
            throw SyncServerError(.startupFailure, "cannot create \(URL(fileURLWithPath: path).lastPathComponent)")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        try handle.write(contentsOf: Data(bytes))
        try handle.synchronize()
    }

    /// Creates `path`, empty and 0600; refuses a path where anything is already (O_EXCL, so no
    /// other process can slip a file in between a check and the creation).
    /// - Throws: `startupFailure` naming the path, saying so when something is there already.
    package static func createNew(_ path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            if errno == EEXIST { throw SyncServerError(.startupFailure, "\(path) exists already") }
            throw SyncServerError(.startupFailure, "cannot create \(path) (errno \(errno))")
        }
        close(descriptor)
    }

    /// Creates the directory 0700 when it is missing.
    package static func createDirectory(_ url: URL) throws {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }
}

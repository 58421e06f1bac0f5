import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// An exclusive lock on a keychain's sync state (`<keychain>.sync.lock`, flock), so one
/// `sync-client sync` or `run` at a time drives it; the kernel drops it when the process dies.
package struct StateLock: Sendable {
    private let descriptor: Int32

    package static func acquire(keychainPath: String) throws(SyncClientError) -> StateLock {
        let path = ClientStateDatabase.path(forKeychain: keychainPath) + ".lock"
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw SyncClientError(.localStorage, "cannot open the sync lock file (errno \(errno))") }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw SyncClientError(.busy, "another sync-client (a running daemon?) is syncing this keychain")
        }
        return StateLock(descriptor: descriptor)
    }

    package func release() {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}

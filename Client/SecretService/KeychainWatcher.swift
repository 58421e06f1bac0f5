import Foundation
import KeychainStore
import Synchronization

/// Tells the service of writes to the keychain by other processes (`sync-client run` applying
/// another device's change, the `keychain` CLI), from a thread of its own until stopped.
final class KeychainWatcher: Sendable {
    private let watch: KeychainFileWatch
    private let stopped = Atomic<Bool>(false)

    /// Nil when inotify is unavailable (then changes are seen at the next call that reads them).
    init?(keychainPath: String) {
        guard let watch = KeychainFileWatch(keychainPath: keychainPath) else { return nil }
        self.watch = watch
    }

    /// Calls `onChange` (on the watcher's thread) after each batch of events on the keychain.
    func start(_ onChange: @escaping @Sendable () -> Void) {
        Thread { [self] in
            while !stopped.load(ordering: .relaxed) {
                if watch.waitForChange(milliseconds: 200) { onChange() }
            }
        }.start()
    }

    func stop() { stopped.store(true, ordering: .relaxed) }
}

import Foundation
import DurableSQLite
import KeychainStore
import KeyValueStore
import Synchronization

/// Tells the service of writes to the keychain by other processes (`sync-client run` applying
/// another device's change, the `keychain` CLI), from a thread of its own until stopped.
final class KeychainWatcher: Sendable {
    private let watch: KeychainFileWatch
    private let stopped = Atomic<Bool>(false)

    /// Watches the keychain at `keychainPath`, the shared groups' keychains beside it and the
    /// account's group records (decision 0296). Nil when inotify is unavailable (then changes are
    /// seen at the next call that reads them).
    init?(keychainPath: String) {
        let own = Array(ChangeNotice(databasePath: keychainPath).fileName.utf8)
        guard let watch = KeychainFileWatch(directoryOf: keychainPath, noticesNamed: { name in
            name.elementsEqual(own) || SharedGroupDirectory.isGroupKeychainNotice(name, besideKeychainAt: keychainPath)
                || SharedGroupDirectory.isRecordsNotice(name, besideKeychainAt: keychainPath)
        }) else { return nil }
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

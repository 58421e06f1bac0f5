import Foundation
import KeychainStore
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Notices writes to the keychain (or a key-value store database) by any process: inotify on its
/// change notice, which every commit writes once it is visible (decision 0268), or, where inotify
/// is unavailable or `poll` is asked for, a short poll of the journal's newest sequence (decision
/// 0053).
package struct JournalWatcher: Sendable {
    package enum Mode: String, Sendable, CaseIterable {
        case inotify, poll
    }

    package let keychainPath: String
    package let mode: Mode
    package let pollInterval: Duration
    /// The names of the change notices watched beside `keychainPath`, when not its own alone
    /// (the shared groups' keychains, decision 0295).
    package let noticesNamed: (@Sendable (ArraySlice<UInt8>) -> Bool)?

    package init(
        keychainPath: String, mode: Mode, pollInterval: Duration = .milliseconds(50),
        noticesNamed: (@Sendable (ArraySlice<UInt8>) -> Bool)? = nil
    ) {
        self.keychainPath = keychainPath
        self.mode = mode
        self.pollInterval = pollInterval
        self.noticesNamed = noticesNamed
    }

    /// Rings `doorbell` on every change until cancelled; in the poll mode, every `pollInterval`
    /// (the listener then checks the journal's newest sequence, a one-row query). Notices named
    /// by `noticesNamed` are watched with inotify only: without it, nothing rings for them (the
    /// daemon's periodic pass finds their writes).
    package func run(doorbell: Doorbell, logger: Logger) async throws {
        let watch = noticesNamed.map { KeychainFileWatch(directoryOf: keychainPath, noticesNamed: $0) } ?? KeychainFileWatch(keychainPath: keychainPath)
        if mode == .inotify, let watch {
            try await run(watch, doorbell: doorbell)
            return
        }
        guard noticesNamed == nil else { return }
        if mode == .inotify { logger.notice("inotify unavailable; polling the keychain journal") }
        while !Task.isCancelled {
            try await Task.sleep(for: pollInterval)
            doorbell.ring()
        }
    }

    /// Reads events on a thread of its own (the wait times out every 200 ms so cancellation is
    /// noticed) and rings for events on the change notice. It rings once as soon as the watch is
    /// in place: a write made before that (the daemon says it runs before this task starts) has
    /// no event, and would otherwise wait for the daemon's periodic pass.
    private func run(_ watch: KeychainFileWatch, doorbell: Doorbell) async throws {
        doorbell.ring()
        let stop = Atomic<Bool>(false)
        let finished = Doorbell()
        let thread = Thread {
            while !stop.load(ordering: .relaxed) {
                if watch.waitForChange(milliseconds: 200) { doorbell.ring() }
            }
            finished.ring()
        }
        thread.start()
        await withTaskCancellationHandler {
            _ = await finished.wait()
        } onCancel: {
            stop.store(true, ordering: .relaxed)
        }
    }
}

import Logging
import ProcessTesting
import SyncClient
import Testing

@Suite struct JournalWatcherTests {
    /// The daemon says it runs before its watchers' tasks start, so a write made in between has no
    /// inotify event; a watcher rings once its watch is in place, and the daemon's check finds that
    /// write then instead of at its periodic pass a minute later. (Seen in a loaded test run: a
    /// group item written just after two daemons started reached the other member's device late.)
    @Test func aWatcherRingsOnceItsWatchIsInPlace() async throws {
        try await withTemporaryDirectory { directory in
            let watcher = JournalWatcher(keychainPath: directory.appendingPathComponent("keychain.db").path, mode: .inotify)
            let doorbell = Doorbell()
            let watching = Task { try await watcher.run(doorbell: doorbell, logger: Logger(label: "test")) }
            defer { watching.cancel() }
            let rang = await withTaskGroup(of: Bool.self) { group in
                group.addTask { await doorbell.wait() }
                // A bound, not a synchronisation: nothing writes, so only the first ring can come.
                group.addTask { (try? await Task.sleep(for: .seconds(60))) == nil }
                defer { group.cancelAll() }
                return await group.next() ?? false
            }
            #expect(rang)
        }
    }
}

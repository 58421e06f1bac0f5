import Foundation
import KeychainModel
import KeychainStore
import Testing

/// Every write transaction of the keychain, whatever its path, posts the change notice once it has
/// committed, and the watch wakes for it; a read posts nothing (decision 0268).
@Suite struct ChangeNoticeTests {
    @Test func everyWriteWakesTheWatchAndAReadDoesNot() throws {
        try withTemporaryKeychain { keychain, directory in
            let path = directory.appendingPathComponent("keychain/keychain.db").path
            let watch = try #require(KeychainFileWatch(keychainPath: path))
            // Another connection, as another process would read: the write is there when the watch wakes.
            let reader = try openKeychain(in: directory)
            let synchronizable = password { $0.synchronizable = true }
            let writes: [(String, () throws -> Void)] = [
                ("add", { try keychain.add(synchronizable) }),
                ("update", { try keychain.update(query(sync: .yes), changes: ItemAttributes(), data: Array("new".utf8)) }),
                ("history", { try keychain.recordHistoryVersion(synchronizable) }),
                ("delete", { try keychain.delete(query(sync: .yes)) }),
                ("lock", { try keychain.lock() }),
            ]
            var journal = try reader.latestJournalSequence()
            for (name, write) in writes {
                try write()
                #expect(watch.waitForChange(milliseconds: 5000), "\(name)")
                while watch.waitForChange(milliseconds: 0) {}
                if ["add", "update", "delete"].contains(name) {
                    let latest = try reader.latestJournalSequence()
                    #expect(latest > journal, "\(name)")
                    journal = latest
                }
            }
            _ = try? reader.find(query(sync: .any, limit: .all, returns: .attributes))
            #expect(!watch.waitForChange(milliseconds: 100))
            var status = stat()
            #expect(stat(path + "-changed", &status) == 0 && status.st_mode & 0o777 == 0o600)
        }
    }
}

import DurableSQLite
import Foundation
import KeyValueStore
import Synchronization
import Testing

/// Opening the key-value database from several processes or threads at once (decision 0072).
@Suite struct DatabaseOpeningTests {
    /// The sync daemon and `keychain kv` may create the file at the same moment.
    @Test func databasesOpenedAtOnceOnANewFileAllSucceed() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        for round in 0..<40 {
            let path = KeyValueDatabase.path(besideKeychainAt: stores.keychainPath("device-\(round)"))
            let failures = Mutex([String]())
            DispatchQueue.concurrentPerform(iterations: 8) { index in
                do {
                    let database = try KeyValueDatabase(path: path)
                    try database.store(named: "app").set(.integer(Int64(index)), forKey: "k\(index)")
                } catch {
                    failures.withLock { $0.append("\(error); \((error as? KeyValueStoreError)?.underlying.map { "\($0)" } ?? "")") }
                }
            }
            #expect(failures.withLock { $0 } == [], "round \(round)")
            #expect(try KeyValueDatabase(path: path).store(named: "app").dictionaryRepresentation().count == 8)
        }
    }

    /// A file SQLite creates beside the database (`-wal`, `-shm`) while another opener checks the
    /// path is seen as what it is, never as "a symbolic link to nothing": stat(2) found nothing,
    /// then lstat(2) found the new file (two openers failed so in a loaded CI run).
    @Test func aFileAppearingWhileItIsCheckedIsNoDanglingLink() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        try FileManager.default.createDirectory(at: stores.directory, withIntermediateDirectories: true)
        let path = stores.directory.appendingPathComponent("keychain.kv.sqlite-wal").path
        let misread = Mutex((count: 0, kind: ""))
        DispatchQueue.concurrentPerform(iterations: 2) { role in
            for _ in 0..<100_000 {
                if role == 0 {
                    close(open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600))
                    unlink(path)
                } else if case .other(let kind) = FileKind(atPath: path) {
                    misread.withLock { $0 = ($0.count + 1, kind) }
                }
            }
        }
        let (count, kind) = misread.withLock { $0 }
        #expect(count == 0, "seen as \(kind)")
    }
}

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
            let failures = Mutex(0)
            DispatchQueue.concurrentPerform(iterations: 8) { index in
                do {
                    let database = try KeyValueDatabase(path: path)
                    try database.store(named: "app").set(.integer(Int64(index)), forKey: "k\(index)")
                } catch {
                    failures.withLock { $0 += 1 }
                }
            }
            #expect(failures.withLock { $0 } == 0, "round \(round)")
            #expect(try KeyValueDatabase(path: path).store(named: "app").dictionaryRepresentation().count == 8)
        }
    }
}

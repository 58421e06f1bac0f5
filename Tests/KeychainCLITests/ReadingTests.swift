import Foundation
import Testing

@Suite struct ReadingTests {
    /// A read opens and closes the keychain without a write transaction: it does not contend for
    /// the write lock with a running daemon, and pays no fdatasync.
    @Test func findingAPasswordLeavesEveryFileByteForByteUnchanged() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        try keychain.run(["add-generic-password", "-a", "alice", "-s", "mail", "-w", "pw", "--sync"])
        let find = ["find-generic-password", "-a", "alice", "-s", "mail", "--sync", "yes", "-w"]
        #expect(try keychain.run(find).text == "pw\n")
        let files = [keychain.path, keychain.path + "-wal"]
        let before = files.map { FileManager.default.contents(atPath: $0) }
        #expect(before.allSatisfy { $0 != nil })
        #expect(try keychain.run(find).text == "pw\n")
        #expect(files.map { FileManager.default.contents(atPath: $0) } == before)
    }
}

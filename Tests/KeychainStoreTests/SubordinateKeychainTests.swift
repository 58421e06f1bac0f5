import Foundation
import KeychainModel
import KeychainStore
import Synchronization
import Testing

/// A keychain kept beside another and locked with it (a shared group's, decision 0298).
@Suite struct SubordinateKeychainTests {
    /// Two processes may open a group's new keychain at once (`sync-client` joining the group
    /// and the Secret Service noticing it): every open succeeds.
    @Test func opensOfANewSubordinateKeychainAtOnceAllSucceed() throws {
        try withTemporaryKeychain { account, directory in
            for round in 0..<40 {
                let path = directory.appendingPathComponent("keychain/keychain.group-\(round).db").path
                let failures = Mutex<[String]>([])
                DispatchQueue.concurrentPerform(iterations: 4) { _ in
                    do {
                        let group = try account.openSubordinate(at: path, name: [UInt8(round)], configuration: Keychain.Configuration())
                        _ = try group.findData(query())
                    } catch let error as KeychainError where error.code == .itemNotFound {
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
                #expect(failures.withLock { $0 }.isEmpty, "round \(round): \(failures.withLock { $0 })")
            }
        }
    }

    /// Its class keys are sealed under a key derived from its keychain's "after first unlock"
    /// class key: no device key file of its own; it is locked while its keychain is; a copy of
    /// the files on a machine that never
    /// unlocked the keychain opens nothing until the passcode unlocks it; another name's key
    /// opens none of its secrets.
    @Test func aSubordinateKeychainOpensOnlyAfterItsKeychainsFirstUnlock() throws {
        try withTemporaryKeychain { account, directory in
            try account.setPasscode("1234", current: nil)
            let path = directory.appendingPathComponent("keychain/keychain.group-01.db").path
            let group = try account.openSubordinate(at: path, name: [1], configuration: Keychain.Configuration())
            try group.add(password(secret: "shared"))
            #expect(try group.findData(query()) == Array("shared".utf8))
            #expect(!FileManager.default.fileExists(atPath: path + ".devicekey"))
            // Locked with its keychain: its "when unlocked" items give nothing meanwhile.
            try account.lock()
            #expect(status { try group.findData(query()) } == .interactionNotAllowed)
            try account.unlock(passcode: "1234")
            #expect(try group.findData(query()) == Array("shared".utf8))

            // The same files on a machine that has not unlocked the keychain since it started.
            let copy = FileManager.default.temporaryDirectory.appendingPathComponent("keychain-tests-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: copy) }
            try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: directory.appendingPathComponent("keychain"), to: copy.appendingPathComponent("keychain"))
            let copied = try openKeychain(in: copy)
            let copiedPath = copy.appendingPathComponent("keychain/keychain.group-01.db").path
            #expect(status { try copied.openSubordinate(at: copiedPath, name: [1], configuration: Keychain.Configuration()) } == .interactionNotAllowed)
            try copied.unlock(passcode: "1234")
            let reopened = try copied.openSubordinate(at: copiedPath, name: [1], configuration: Keychain.Configuration())
            #expect(try reopened.findData(query()) == Array("shared".utf8))
            let wrong = try copied.openSubordinate(at: copiedPath, name: [2], configuration: Keychain.Configuration())
            #expect(status { try wrong.findData(query()) } != .success)
        }
    }
}

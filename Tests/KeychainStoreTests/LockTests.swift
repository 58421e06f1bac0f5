import Foundation
import GRDB
import KeychainModel
import KeychainStore
import Testing

@Suite struct LockTests {
    func alwaysQuery() -> Query {
        var filters = ItemAttributes()
        filters.service = "mail"
        filters.accessible = .always
        return Query(itemClass: .genericPassword, attributes: filters, returns: .data)
    }

    @Test func lockedWhenUnlockedItemIsInteractionNotAllowed() throws {
        try withTemporaryKeychain { keychain, _ in
            try keychain.add(password())
            try keychain.lock()
            #expect(status { try keychain.find(query()) } == .interactionNotAllowed)
            #expect(status { try keychain.update(query(), changes: ItemAttributes(), data: [1]) } == .interactionNotAllowed)
            #expect(status { try keychain.delete(query()) } == .interactionNotAllowed)
            try keychain.unlock(passcode: nil)
            #expect(try keychain.findData(query()) == Array("s3cret".utf8))
        }
    }

    @Test func lockedKeychainDoesNotRevealWhetherAnItemExists() throws {
        try withTemporaryKeychain { keychain, _ in
            try keychain.add(password(account: "exists"))
            try keychain.lock()
            #expect(status { try keychain.find(query(account: "exists")) } == .interactionNotAllowed)
            #expect(status { try keychain.find(query(account: "missing")) } == .interactionNotAllowed)
            #expect(status { try keychain.add(password(account: "exists") { $0.accessible = .always }) } == .interactionNotAllowed)
            #expect(status { try keychain.add(password(account: "new")) } == .interactionNotAllowed)
        }
    }

    @Test func alwaysItemsStayReadableWhileLocked() throws {
        try withTemporaryKeychain { keychain, _ in
            try keychain.add(password { $0.accessible = .always })
            try keychain.lock()
            #expect(try keychain.findData(alwaysQuery()) == Array("s3cret".utf8))
        }
    }

    @Test func lockInOneInstanceTakesEffectInAnother() throws {
        try withTemporaryKeychain { keychain, directory in
            try keychain.add(password())
            let other = try openKeychain(in: directory)
            #expect(try other.findData(query()) == Array("s3cret".utf8))
            try keychain.lock()
            #expect(status { try other.find(query()) } == .interactionNotAllowed)
            try keychain.unlock(passcode: nil)
            #expect(try other.findData(query()) == Array("s3cret".utf8))
        }
    }

    @Test func passcodeUnlocksAndWrongPasscodeFails() throws {
        try withTemporaryKeychain { keychain, directory in
            try keychain.add(password())
            try keychain.setPasscode("1234", current: nil)
            let lockStatus = try keychain.lockStatus()
            #expect(!lockStatus.isLocked && lockStatus.hasPasscode)
            #expect(try keychain.findData(query()) == Array("s3cret".utf8))
            try keychain.lock()
            #expect(status { try keychain.unlock(passcode: "9999") } == .authFailed)
            #expect(status { try keychain.unlock(passcode: nil) } == .authFailed)
            let other = try openKeychain(in: directory)
            #expect(status { try other.find(query()) } == .interactionNotAllowed)
            try other.unlock(passcode: "1234")
            #expect(try keychain.findData(query()) == Array("s3cret".utf8))
        }
    }

    @Test func changingThePasscodeNeedsTheCurrentOne() throws {
        try withTemporaryKeychain { keychain, _ in
            try keychain.add(password())
            try keychain.setPasscode("old", current: nil)
            #expect(status { try keychain.setPasscode("new", current: "wrong") } == .authFailed)
            try keychain.setPasscode("new", current: "old")
            try keychain.lock()
            #expect(status { try keychain.unlock(passcode: "old") } == .authFailed)
            try keychain.unlock(passcode: "new")
            #expect(try keychain.findData(query()) == Array("s3cret".utf8))
        }
    }

    @Test func lockWithPasscodeLeavesNoClassKeyTheDeviceKeyCanOpen() throws {
        try withTemporaryKeychain { keychain, directory in
            try keychain.add(password())
            try keychain.setPasscode("1234", current: nil)
            try keychain.lock()
            let database = try DatabaseQueue(path: keychain.path)
            let deviceWrapped = try database.read { db in
                try Row.fetchAll(db, sql: "SELECT protection_class FROM class_key WHERE device_wrapped IS NOT NULL").map { $0[0] as String }
            }
            let sessionKeys = try database.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM session_key") }
            #expect(Set(deviceWrapped) == [ProtectionClass.always.rawValue])
            #expect(sessionKeys == 0)
            try database.close()
            // A fresh process with the device key but without the passcode cannot read the item.
            let fresh = try openKeychain(in: directory)
            #expect(status { try fresh.find(query()) } == .interactionNotAllowed)
        }
    }

    /// Decision 0136: with a passcode set, "after first unlock" stays readable while locked once
    /// unlocked, but the data directory with its device key alone opens neither it nor "when
    /// unlocked"; a restart (the runtime directory emptied) locks both until the passcode.
    @Test func thePasscodeProtectsAfterFirstUnlockAtRest() throws {
        try withTemporaryKeychain { keychain, directory in
            let afterFirstUnlock = password(service: "daemon") { $0.accessible = .afterFirstUnlockThisDeviceOnly }
            var afuQuery = query(service: "daemon")
            afuQuery.attributes.accessible = .afterFirstUnlockThisDeviceOnly
            try keychain.add(password())
            try keychain.add(afterFirstUnlock)
            try keychain.setPasscode("1234", current: nil)
            try keychain.lock()
            #expect(try keychain.findData(afuQuery) == Array("s3cret".utf8))
            #expect(try openKeychain(in: directory).findData(afuQuery) == Array("s3cret".utf8))

            // A copy of the data directory, device key included, elsewhere: nothing opens.
            let copy = directory.appendingPathComponent("copy")
            try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: directory.appendingPathComponent("keychain"), to: copy.appendingPathComponent("keychain"))
            let copied = try openKeychain(in: copy)
            #expect(status { try copied.findData(afuQuery) } == .interactionNotAllowed)
            #expect(status { try copied.findData(query()) } == .interactionNotAllowed)
            #expect(try copied.lockStatus().isLocked)

            // A restart empties the runtime directory: locked until the passcode, then both open.
            try FileManager.default.removeItem(at: directory.appendingPathComponent("run"))
            try FileManager.default.createDirectory(at: directory.appendingPathComponent("run"), withIntermediateDirectories: true)
            let restarted = try openKeychain(in: directory)
            #expect(status { try restarted.findData(afuQuery) } == .interactionNotAllowed)
            #expect(try restarted.lockStatus().isLocked)
            try restarted.unlock(passcode: "1234")
            #expect(try restarted.findData(afuQuery) == Array("s3cret".utf8))
            #expect(try restarted.findData(query()) == Array("s3cret".utf8))
        }
    }

    /// A session file whose keys the device key does not open (damaged, or planted by someone
    /// else) counts as no session: the keychain is locked, not broken, and the passcode opens it.
    @Test func aSessionFileThatDoesNotOpenCountsAsLocked() throws {
        try withTemporaryKeychain { keychain, directory in
            try keychain.add(password())
            try keychain.setPasscode("1234", current: nil)
            let run = directory.appendingPathComponent("run")
            let session = try #require(try FileManager.default.contentsOfDirectory(atPath: run.path).first { $0.hasSuffix(".session") })
            try "A \(Data(repeating: 7, count: 60).base64EncodedString())\n".write(
                to: run.appendingPathComponent(session), atomically: true, encoding: .utf8)
            let other = try openKeychain(in: directory)
            #expect(try other.lockStatus().isLocked)
            #expect(status { try other.findData(query()) } == .interactionNotAllowed)
            try other.unlock(passcode: "1234")
            #expect(try other.findData(query()) == Array("s3cret".utf8))
        }
    }

    /// What the sync client asks before writing a pulled item (decision 0137): a class locked
    /// away answers false, in this instance and in another, until the unlock.
    @Test func isAvailableFollowsTheLockOfEachClass() throws {
        try withTemporaryKeychain { keychain, directory in
            try keychain.setPasscode("1234", current: nil)
            try keychain.lock()
            let other = try openKeychain(in: directory)
            for instance in [keychain, other] {
                #expect(try !instance.isAvailable(.whenUnlocked))
                #expect(try instance.isAvailable(.afterFirstUnlock))
                #expect(try instance.isAvailable(.always))
            }
            try other.unlock(passcode: "1234")
            for instance in [keychain, other] {
                #expect(try instance.isAvailable(.whenUnlocked))
            }
        }
    }

    @Test func passcodeClassNeedsAPasscode() throws {
        try withTemporaryKeychain { keychain, _ in
            let item = password { $0.accessible = .whenPasscodeSetThisDeviceOnly }
            #expect(status { try keychain.add(item) } == .notAvailable)
            try keychain.setPasscode("1234", current: nil)
            try keychain.add(item)
            #expect(try keychain.findData(query()) == Array("s3cret".utf8))
        }
    }
}

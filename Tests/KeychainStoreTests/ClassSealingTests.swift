import Foundation
import KeychainModel
import KeychainStore
import Testing

/// The class-key sealing API the sync state keeps its copies of items with (decision 0216).
@Suite struct ClassSealingTests {
    let context = Array("record:synced/item-1".utf8)

    @Test func whenUnlockedValueOpensOnlyWhileUnlocked() throws {
        try withTemporaryKeychain { keychain, directory in
            try keychain.setPasscode("1234", current: nil)
            let sealed = try keychain.sealWithClassKey(Array("s3cret".utf8), protectionClass: .whenUnlocked, context: context)
            #expect(try keychain.openWithClassKey(sealed, protectionClass: .whenUnlocked, context: context) == Array("s3cret".utf8))
            try keychain.lock()
            // Another process of the user on the running machine: the device key file and the
            // session file, nothing else.
            let other = try openKeychain(in: directory)
            #expect(status { try other.openWithClassKey(sealed, protectionClass: .whenUnlocked, context: context) } == .interactionNotAllowed)
            #expect(status { try keychain.openWithClassKey(sealed, protectionClass: .whenUnlocked, context: context) } == .interactionNotAllowed)
            #expect(status { try keychain.sealWithClassKey([1], protectionClass: .whenUnlocked, context: context) } == .interactionNotAllowed)
            // "After first unlock" values stay available while locked.
            let afterFirst = try other.sealWithClassKey([7, 8], protectionClass: .afterFirstUnlock, context: context)
            #expect(try other.openWithClassKey(afterFirst, protectionClass: .afterFirstUnlock, context: context) == [7, 8])
            try keychain.unlock(passcode: "1234")
            #expect(try other.openWithClassKey(sealed, protectionClass: .whenUnlocked, context: context) == Array("s3cret".utf8))
        }
    }

    @Test func sealedValueIsBoundToItsClassAndContext() throws {
        try withTemporaryKeychain { keychain, _ in
            let sealed = try keychain.sealWithClassKey([1, 2, 3], protectionClass: .whenUnlocked, context: context)
            #expect(status { try keychain.openWithClassKey(sealed, protectionClass: .whenUnlocked, context: Array("record:other".utf8)) } == .decode)
            #expect(status { try keychain.openWithClassKey(sealed, protectionClass: .afterFirstUnlock, context: context) } == .decode)
            var altered = sealed
            altered.sealedData[altered.sealedData.count - 1] ^= 1
            #expect(status { try keychain.openWithClassKey(altered, protectionClass: .whenUnlocked, context: context) } == .decode)
        }
    }
}

import Foundation
import SecurityCompat
import Testing

/// The default keychain is process-wide: one test at a time may point it somewhere.
let defaultKeychainLock = NSLock()

/// Points the SecItem functions at a fresh keychain for the duration of `body`.
func withDefaultKeychain(_ body: () throws -> Void) rethrows {
    defaultKeychainLock.lock()
    defer { defaultKeychainLock.unlock() }
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("compat-tests-\(UUID().uuidString)")
    DefaultKeychain.use(path: directory.appendingPathComponent("keychain.db").path)
    defer {
        DefaultKeychain.use(path: nil)
        try? FileManager.default.removeItem(at: directory)
    }
    try body()
}

/// The default keychain is process-wide, so these suites run one test at a time.
@Suite(.serialized) struct CookbookExampleTests {
    @Test func storingTwiceIsADuplicate() {
        withDefaultKeychain {
            #expect(CookbookExamples.storeValue() == errSecSuccess)
            #expect(CookbookExamples.storeValue() == errSecDuplicateItem)
        }
    }

    @Test func readingAttributesReturnsADictionary() {
        withDefaultKeychain {
            _ = CookbookExamples.storeValue()
            let (status, attributes) = CookbookExamples.readAttributes()
            #expect(status == errSecSuccess)
            #expect(attributes?[kSecAttrAccount as String] as? String == "Full Name")
            #expect(attributes?[kSecAttrService as String] as? String == CookbookExamples.bundleIdentifier)
            #expect(attributes?[kSecAttrCreationDate as String] is Date)
            #expect(attributes?[kSecAttrModificationDate as String] is Date)
            #expect(attributes?[kSecAttrAccessGroup as String] is String)
            #expect(attributes?[kSecValueData as String] == nil)
        }
    }

    @Test func readingDataReturnsTheValue() {
        withDefaultKeychain {
            #expect(CookbookExamples.readValue().status == errSecItemNotFound)
            _ = CookbookExamples.storeValue()
            let (status, value) = CookbookExamples.readValue()
            #expect(status == errSecSuccess && value == "Steve Jobs")
        }
    }

    @Test func matchLimitAllReturnsAnArray() {
        withDefaultKeychain {
            _ = CookbookExamples.storeValue()
            let (status, values) = CookbookExamples.readAllValues()
            #expect(status == errSecSuccess && values == ["Steve Jobs"])
        }
    }

    @Test func updateChangesDataAndComment() {
        withDefaultKeychain {
            #expect(CookbookExamples.updateValue().found == errSecItemNotFound)
            _ = CookbookExamples.storeValue()
            let (found, updated) = CookbookExamples.updateValue()
            #expect(found == errSecSuccess && updated == errSecSuccess)
            #expect(CookbookExamples.readExistingComment() == "My Comments")
            #expect(CookbookExamples.readValue().value == "Mark Tremonti")
        }
    }

    @Test func deleteRemovesTheItem() {
        withDefaultKeychain {
            _ = CookbookExamples.storeValue()
            let (found, deleted) = CookbookExamples.deleteValue()
            #expect(found == errSecSuccess && deleted == errSecSuccess)
            #expect(CookbookExamples.readValue().status == errSecItemNotFound)
            #expect(CookbookExamples.deleteValue().found == errSecItemNotFound)
        }
    }

    @Test(arguments: [false, true])
    func sharedAccessGroupIsReadByTheSecondApp(synchronizable: Bool) {
        withDefaultKeychain {
            #expect(CookbookExamples.writeShared(synchronizable: synchronizable) == errSecSuccess)
            // Running the writer again deletes first, so it succeeds again.
            #expect(CookbookExamples.writeShared(synchronizable: synchronizable) == errSecSuccess)
            let (status, value) = CookbookExamples.readShared(synchronizable: synchronizable)
            #expect(status == errSecSuccess && value == "Steve Jobs")
            // A query without kSecAttrSynchronizable does not see the iCloud item, and vice versa.
            #expect(CookbookExamples.readShared(synchronizable: !synchronizable).status == errSecItemNotFound)
        }
    }
}

import Foundation
import SecurityCompat
import Testing

/// The points where the data-protection keychain's behaviour was checked against Apple's own
/// regression tests (si-43-persistent and the SecItem tests): references alone, items without
/// data, and match limits outside searches.
@Suite(.serialized) struct AppleSemanticsTests {
    let base: [String: Any] = [
        kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "zuigt.nl",
        kSecAttrAccount as String: "frtnbf", kSecAttrPort as String: 80, kSecAttrProtocol as String: kSecAttrProtocolHTTP,
    ]

    func addReturningReference(_ item: [String: Any]) throws -> Data {
        var reference: CFTypeRef?
        let add = item.merging([kSecReturnPersistentRef as String: true, kSecValueData as String: Data("test".utf8)]) { _, new in new }
        #expect(SecItemAdd(add as CFDictionary, &reference) == errSecSuccess)
        return try #require(reference as? Data)
    }

    @Test func aReferenceAloneFindsUpdatesAndDeletesItsItemWithoutAClass() throws {
        try withDefaultKeychain {
            let first = try addReturningReference(base)
            let second = try addReturningReference(base.merging([kSecAttrAccount as String: "johndoe"]) { _, new in new })
            var result: CFTypeRef?
            let byReference: [String: Any] = [kSecValuePersistentRef as String: first, kSecReturnAttributes as String: true]
            #expect(SecItemCopyMatching(byReference as CFDictionary, &result) == errSecSuccess)
            #expect((result as? [String: Any])?[kSecAttrAccount as String] as? String == "frtnbf")

            #expect(SecItemUpdate([kSecValuePersistentRef as String: first] as CFDictionary, [kSecAttrServer as String: "zuigt.com"] as CFDictionary) == errSecSuccess)
            #expect(SecItemCopyMatching(byReference as CFDictionary, &result) == errSecSuccess)
            #expect((result as? [String: Any])?[kSecAttrServer as String] as? String == "zuigt.com")
            let other: [String: Any] = [kSecValuePersistentRef as String: second, kSecReturnAttributes as String: true]
            #expect(SecItemCopyMatching(other as CFDictionary, &result) == errSecSuccess)
            #expect((result as? [String: Any])?[kSecAttrServer as String] as? String == "zuigt.nl")

            #expect(SecItemDelete([kSecValuePersistentRef as String: first] as CFDictionary) == errSecSuccess)
            #expect(SecItemCopyMatching(byReference as CFDictionary, &result) == errSecItemNotFound)
            #expect(SecItemCopyMatching(other as CFDictionary, &result) == errSecSuccess)
            #expect(SecItemDelete([kSecValuePersistentRef as String: second] as CFDictionary) == errSecSuccess)
        }
    }

    @Test func aReferenceTogetherWithOtherAttributesIsAParameterError() throws {
        try withDefaultKeychain {
            let reference = try addReturningReference(base)
            let withAccount: [String: Any] = [kSecValuePersistentRef as String: reference, kSecAttrAccount as String: "frtnbf"]
            #expect(SecItemCopyMatching(withAccount as CFDictionary, nil) == errSecParam)
            #expect(SecItemUpdate(withAccount as CFDictionary, [kSecAttrLabel as String: "l"] as CFDictionary) == errSecParam)
            #expect(SecItemDelete(withAccount as CFDictionary) == errSecParam)
            // Its class beside it is fine; another class finds nothing.
            #expect(SecItemCopyMatching([kSecClass as String: kSecClassInternetPassword, kSecValuePersistentRef as String: reference] as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemCopyMatching([kSecClass as String: kSecClassGenericPassword, kSecValuePersistentRef as String: reference] as CFDictionary, nil) == errSecItemNotFound)
        }
    }

    @Test func aReferenceFindsASynchronizableItemToo() throws {
        try withDefaultKeychain {
            let reference = try addReturningReference(base.merging([kSecAttrSynchronizable as String: true]) { _, new in new })
            var result: CFTypeRef?
            let query: [String: Any] = [kSecValuePersistentRef as String: reference, kSecReturnData as String: true]
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == Data("test".utf8))
        }
    }

    @Test func anItemAddedWithoutDataHasNoDataKey() throws {
        try withDefaultKeychain {
            #expect(SecItemAdd(base as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd(base.merging([kSecAttrAccount as String: "empty", kSecValueData as String: Data()]) { _, new in new } as CFDictionary, nil) == errSecSuccess)
            var result: CFTypeRef?
            let query: [String: Any] = [
                kSecClass as String: kSecClassInternetPassword, kSecReturnData as String: true, kSecReturnAttributes as String: true,
                kSecMatchLimit as String: kSecMatchLimitAll,
            ]
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            let items = try #require(result as? [[String: Any]])
            let byAccount = Dictionary(uniqueKeysWithValues: items.map { ($0[kSecAttrAccount as String] as? String ?? "", $0) })
            #expect(byAccount["frtnbf"]?.keys.contains(kSecValueData as String) == false)
            #expect(byAccount["empty"]?[kSecValueData as String] as? Data == Data())
            // Data set later by an update is there.
            #expect(SecItemUpdate(base as CFDictionary, [kSecValueData as String: Data("now".utf8)] as CFDictionary) == errSecSuccess)
            #expect(SecItemCopyMatching(base.merging([kSecReturnData as String: true]) { _, new in new } as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == Data("now".utf8))
        }
    }

    @Test(arguments: [kSecMatchLimitOne, kSecMatchLimitAll])
    func aMatchLimitInAnUpdateOrDeleteQueryIsAParameterError(limit: String) {
        withDefaultKeychain {
            #expect(SecItemAdd(base.merging([kSecValueData as String: Data("x".utf8)]) { _, new in new } as CFDictionary, nil) == errSecSuccess)
            let limited = base.merging([kSecMatchLimit as String: limit]) { _, new in new }
            #expect(SecItemUpdate(limited as CFDictionary, [kSecAttrLabel as String: "l"] as CFDictionary) == errSecParam)
            #expect(SecItemDelete(limited as CFDictionary) == errSecParam)
            // Nothing was changed or removed.
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(base.merging([kSecReturnAttributes as String: true]) { _, new in new } as CFDictionary, &result) == errSecSuccess)
            #expect((result as? [String: Any])?[kSecAttrLabel as String] == nil)
        }
    }
}

import Foundation
import SecurityCompat
import Testing

@Suite(.serialized) struct SecItemTests {
    let base: [String: Any] = [
        kSecClass as String: kSecClassGenericPassword,
        kSecAttrService as String: "svc",
        kSecAttrAccount as String: "acct",
    ]

    func adding(_ extra: [String: Any]) -> [String: Any] {
        base.merging(extra) { _, new in new }
    }

    @Test func statusConstantsHaveApplesValues() {
        #expect([errSecSuccess, errSecUnimplemented, errSecParam, errSecNotAvailable, errSecAuthFailed, errSecDuplicateItem]
            == [0, -4, -50, -25291, -25293, -25299])
        #expect([errSecItemNotFound, errSecNoSuchAttr, errSecNoSuchClass, errSecInteractionNotAllowed, errSecDecode]
            == [-25300, -25303, -25306, -25308, -26275])
        #expect(SecCopyErrorMessageString(errSecDuplicateItem, nil) == "duplicate item")
    }

    @Test func parameterErrors() {
        withDefaultKeychain {
            #expect(SecItemAdd(adding([kSecValueData as String: Data("x".utf8)]) as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemUpdate(adding([kSecReturnData as String: true]) as CFDictionary, [kSecAttrLabel as String: "l"] as CFDictionary) == errSecParam)
            #expect(SecItemUpdate(base as CFDictionary, [kSecClass as String: kSecClassGenericPassword] as CFDictionary) == errSecParam)
            #expect(SecItemUpdate(base as CFDictionary, [kSecMatchLimit as String: kSecMatchLimitAll] as CFDictionary) == errSecParam)
            #expect(SecItemCopyMatching([kSecAttrAccount as String: "acct"] as CFDictionary, nil) == errSecParam)
            #expect(SecItemAdd(adding([kSecAttrAccount as String: 42]) as CFDictionary, nil) == errSecParam)
            let thisDeviceOnlySynced = adding([
                kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
                kSecAttrSynchronizable as String: kCFBooleanTrue!, kSecAttrAccount as String: "other",
            ])
            #expect(SecItemAdd(thisDeviceOnlySynced as CFDictionary, nil) == errSecParam)
        }
    }

    @Test func unknownClassAndAttribute() {
        withDefaultKeychain {
            #expect(SecItemCopyMatching([kSecClass as String: "nope"] as CFDictionary, nil) == errSecNoSuchClass)
            #expect(SecItemAdd(adding(["zzzz": "x"]) as CFDictionary, nil) == errSecNoSuchAttr)
            #expect(SecItemAdd(adding([kSecAttrServer as String: "example.com"]) as CFDictionary, nil) == errSecNoSuchAttr)
            #expect(SecItemCopyMatching(adding([kSecReturnRef as String: true]) as CFDictionary, nil) == errSecUnimplemented)
        }
    }

    @Test func synchronizableAnyMatchesBoth() {
        withDefaultKeychain {
            #expect(SecItemAdd(adding([kSecValueData as String: Data("l".utf8)]) as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd(adding([kSecValueData as String: Data("s".utf8), kSecAttrSynchronizable as String: true]) as CFDictionary, nil) == errSecSuccess)
            var result: CFTypeRef?
            let query = adding([
                kSecAttrSynchronizable as String: kSecAttrSynchronizableAny, kSecMatchLimit as String: kSecMatchLimitAll,
                kSecReturnData as String: true,
            ])
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            #expect(Set((result as? [Data]) ?? []) == [Data("l".utf8), Data("s".utf8)])
            #expect(SecItemDelete(adding([kSecAttrSynchronizable as String: kSecAttrSynchronizableAny]) as CFDictionary) == errSecSuccess)
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecItemNotFound)
        }
    }

    @Test func combinedReturnTypesGiveADictionaryAndPersistentReferencesFindTheItem() throws {
        try withDefaultKeychain {
            var added: CFTypeRef?
            let add = adding([kSecValueData as String: Data("pw".utf8), kSecReturnPersistentRef as String: true])
            #expect(SecItemAdd(add as CFDictionary, &added) == errSecSuccess)
            let reference = try #require(added as? Data)
            var result: CFTypeRef?
            let byReference: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecValuePersistentRef as String: reference,
                kSecReturnData as String: true, kSecReturnAttributes as String: true,
            ]
            #expect(SecItemCopyMatching(byReference as CFDictionary, &result) == errSecSuccess)
            let dictionary = try #require(result as? [String: Any])
            #expect(dictionary[kSecValueData as String] as? Data == Data("pw".utf8))
            #expect(dictionary[kSecAttrAccount as String] as? String == "acct")
            #expect(dictionary[kSecClass as String] as? String == kSecClassGenericPassword)
        }
    }

    @Test func updateOntoAnExistingItemIsADuplicate() {
        withDefaultKeychain {
            #expect(SecItemAdd(adding([kSecValueData as String: Data("1".utf8)]) as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd(adding([kSecAttrAccount as String: "b"]) as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemUpdate(adding([kSecAttrAccount as String: "b"]) as CFDictionary, [kSecAttrAccount as String: "acct"] as CFDictionary) == errSecDuplicateItem)
        }
    }

    @Test func internetPasswordRoundTrip() {
        withDefaultKeychain {
            let item: [String: Any] = [
                kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "example.com",
                kSecAttrAccount as String: "bob", kSecAttrProtocol as String: kSecAttrProtocolHTTPS, kSecAttrPort as String: 443,
                kSecAttrAuthenticationType as String: kSecAttrAuthenticationTypeHTMLForm, kSecValueData as String: Data("pw".utf8),
            ]
            #expect(SecItemAdd(item as CFDictionary, nil) == errSecSuccess)
            var result: CFTypeRef?
            let query: [String: Any] = [
                kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "example.com",
                kSecReturnAttributes as String: true,
            ]
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            let attributes = result as? [String: Any]
            #expect(attributes?[kSecAttrPort as String] as? Int == 443)
            #expect(attributes?[kSecAttrProtocol as String] as? String == kSecAttrProtocolHTTPS)
        }
    }

    @Test func defaultPathFollowsTheEnvironment() {
        #expect(DefaultKeychain.path.hasSuffix(".db"))
    }
}

// Swift translations of the Objective-C keychain examples of sections 8.2 to 8.7 (chapter 8,
// Security) of the iOS 7 Programming Cookbook. On Apple platforms these functions compile against
// `import Security` (plus Foundation); here the only change is `import SecurityCompat`.
// `NSLog` became `print`; each example returns what it printed so the tests can check it.
import Foundation
import SecurityCompat

enum CookbookExamples {
    /// The book uses the app's bundle identifier as the service; a test runner has none.
    static var bundleIdentifier: String { Bundle.main.bundleIdentifier ?? "com.pixolity.ios.cookbook.SecurityApp" }

    // MARK: 8.2 Storing values in the keychain

    static func storeValue() -> OSStatus {
        let key = "Full Name"
        let value = "Steve Jobs"
        let valueData = value.data(using: .utf8)!
        let service = bundleIdentifier
        let secItem: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: key,
            kSecValueData as String: valueData,
        ]
        var result: CFTypeRef?
        let status = SecItemAdd(secItem as CFDictionary, &result)
        if status == errSecSuccess {
            print("Successfully stored the value")
        } else {
            print("Failed to store the value with code: \(status)")
        }
        return status
    }

    // MARK: 8.3 Finding values in the keychain

    static func readAttributes() -> (status: OSStatus, attributes: [String: Any]?) {
        let keyToSearchFor = "Full Name"
        let service = bundleIdentifier
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: keyToSearchFor,
            kSecReturnAttributes as String: kCFBooleanTrue!,
        ]
        var valueAttributes: CFTypeRef?
        let results = SecItemCopyMatching(query as CFDictionary, &valueAttributes)
        let attributes = valueAttributes as? [String: Any]
        if results == errSecSuccess, let attributes {
            let key = attributes[kSecAttrAccount as String] as? String
            let accessGroup = attributes[kSecAttrAccessGroup as String] as? String
            let creationDate = attributes[kSecAttrCreationDate as String] as? Date
            let modifiedDate = attributes[kSecAttrModificationDate as String] as? Date
            let service = attributes[kSecAttrService as String] as? String
            print("""
                Key = \(key ?? "")
                Access Group = \(accessGroup ?? "")
                Creation Date = \(String(describing: creationDate))
                Modification Date = \(String(describing: modifiedDate))
                Service = \(service ?? "")
                """)
        } else {
            print("Error happened with code: \(results)")
        }
        return (results, attributes)
    }

    static func readValue() -> (status: OSStatus, value: String?) {
        let keyToSearchFor = "Full Name"
        let service = bundleIdentifier
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: keyToSearchFor,
            kSecReturnData as String: kCFBooleanTrue!,
        ]
        var cfValue: CFTypeRef?
        let results = SecItemCopyMatching(query as CFDictionary, &cfValue)
        var value: String?
        if results == errSecSuccess, let data = cfValue as? Data {
            value = String(data: data, encoding: .utf8)
            print("Value = \(value ?? "")")
        } else {
            print("Error happened with code: \(results)")
        }
        return (results, value)
    }

    static func readAllValues() -> (status: OSStatus, values: [String]) {
        let keyToSearchFor = "Full Name"
        let service = bundleIdentifier
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: keyToSearchFor,
            kSecReturnData as String: kCFBooleanTrue!,
            kSecMatchLimit as String: kSecMatchLimitAll,
        ]
        var allCfMatches: CFTypeRef?
        let results = SecItemCopyMatching(query as CFDictionary, &allCfMatches)
        var values: [String] = []
        if results == errSecSuccess, let allMatches = allCfMatches as? [Data] {
            for itemData in allMatches {
                let value = String(data: itemData, encoding: .utf8) ?? ""
                print("Value = \(value)")
                values.append(value)
            }
        } else {
            print("Error happened with code: \(results)")
        }
        return (results, values)
    }

    // MARK: 8.4 Updating values in the keychain

    static func readExistingComment() -> String? {
        let keyToSearchFor = "Full Name"
        let service = bundleIdentifier
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: keyToSearchFor,
            kSecReturnAttributes as String: kCFBooleanTrue!,
        ]
        var cfAttributes: CFTypeRef?
        let found = SecItemCopyMatching(query as CFDictionary, &cfAttributes)
        if found == errSecSuccess, let attributes = cfAttributes as? [String: Any] {
            let comments = attributes[kSecAttrComment as String] as? String
            print("Comments = \(comments ?? "")")
            return comments
        }
        print("Error happened with code: \(found)")
        return nil
    }

    static func updateValue() -> (found: OSStatus, updated: OSStatus?) {
        let keyToSearchFor = "Full Name"
        let service = bundleIdentifier
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: keyToSearchFor,
        ]
        let found = SecItemCopyMatching(query as CFDictionary, nil)
        guard found == errSecSuccess else {
            print("Error happened with code: \(found)")
            return (found, nil)
        }
        let newData = "Mark Tremonti".data(using: .utf8)!
        let update: [String: Any] = [
            kSecValueData as String: newData,
            kSecAttrComment as String: "My Comments",
        ]
        let updated = SecItemUpdate(query as CFDictionary, update as CFDictionary)
        if updated == errSecSuccess {
            _ = readExistingComment()
        } else {
            print("Failed to update the value. Error = \(updated)")
        }
        return (found, updated)
    }

    // MARK: 8.5 Deleting values from the keychain

    static func deleteValue() -> (found: OSStatus, deleted: OSStatus?) {
        let key = "Full Name"
        let service = bundleIdentifier
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: key,
        ]
        let foundExisting = SecItemCopyMatching(query as CFDictionary, nil)
        guard foundExisting == errSecSuccess else {
            print("Did not find the existing value.")
            return (foundExisting, nil)
        }
        let deleted = SecItemDelete(query as CFDictionary)
        print(deleted == errSecSuccess ? "Successfully deleted the item" : "Failed to delete the item.")
        return (foundExisting, deleted)
    }

    // MARK: 8.6 Sharing keychain data between apps (access groups), and 8.7 iCloud (synchronizable)

    /// The writing app of 8.6; with `synchronizable` it is the writing app of 8.7.
    static func writeShared(synchronizable: Bool) -> OSStatus {
        let key = "Full Name"
        let service = bundleIdentifier
        let accessGroup = "F3FU372W5M.*"
        var queryDictionary: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccessGroup as String: accessGroup,
            kSecAttrAccount as String: key,
        ]
        if synchronizable { queryDictionary[kSecAttrSynchronizable as String] = kCFBooleanTrue! }
        // Delete any existing value first: SecItemAdd fails on an existing item.
        SecItemDelete(queryDictionary as CFDictionary)
        let value = "Steve Jobs"
        let valueData = value.data(using: .utf8)!
        var secItem: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccessGroup as String: accessGroup,
            kSecAttrAccount as String: key,
            kSecValueData as String: valueData,
        ]
        if synchronizable { secItem[kSecAttrSynchronizable as String] = kCFBooleanTrue! }
        var result: CFTypeRef?
        let status = SecItemAdd(secItem as CFDictionary, &result)
        if status == errSecSuccess {
            print("Successfully stored the value")
        } else {
            print("Failed to store the value with code: \(status)")
        }
        return status
    }

    /// The reading app of 8.6 (a different bundle, reading the first app's service); with
    /// `synchronizable` the reading app of 8.7.
    static func readShared(synchronizable: Bool) -> (status: OSStatus, value: String?) {
        let key = "Full Name"
        let service = "com.pixolity.ios.cookbook.SecurityApp"
        let accessGroup = "F3FU372W5M.*"
        var queryDictionary: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccessGroup as String: accessGroup,
            kSecAttrAccount as String: key,
            kSecReturnData as String: kCFBooleanTrue!,
        ]
        if synchronizable { queryDictionary[kSecAttrSynchronizable as String] = kCFBooleanTrue! }
        var data: CFTypeRef?
        let found = SecItemCopyMatching(queryDictionary as CFDictionary, &data)
        var value: String?
        if found == errSecSuccess, let data = data as? Data {
            value = String(data: data, encoding: .utf8)
            print("Value = \(value ?? "")")
        } else {
            print("Failed to read the value with error = \(found)")
        }
        return (found, value)
    }
}

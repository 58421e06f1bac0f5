import Foundation
import KeychainModel
import KeychainStore

/// Adds an item to the default keychain, like Apple's `SecItemAdd`.
///
/// - Parameters:
///   - attributes: `kSecClass`, attributes and `kSecValueData`; optionally `kSecReturn…` keys.
///   - result: Where to put the added item's requested values (as for `SecItemCopyMatching`), or nil.
/// - Returns: `errSecSuccess`, `errSecDuplicateItem`, `errSecParam`, … (Apple's values).
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    status {
        let parsed = try DictionaryTranslation.parse(attributes)
        guard let itemClass = parsed.itemClass else { throw KeychainError(.param, "kSecClass is required") }
        guard parsed.limit == nil, parsed.persistentReference == nil else {
            throw KeychainError(.param, "match keys are not valid in an add")
        }
        if parsed.synchronizable == .any { throw KeychainError(.param, "kSecAttrSynchronizableAny is only valid in queries") }
        let keychain = try DefaultKeychain.keychain()
        let stored = try keychain.add(Item(itemClass: itemClass, attributes: parsed.attributes, data: parsed.data))
        if let result, !parsed.returns.isEmpty {
            let query = Query(
                itemClass: itemClass, attributes: PrimaryKey(itemClass: itemClass, attributes: stored).attributes,
                returns: parsed.returns)
            result.pointee = DictionaryTranslation.resultValue(try keychain.find(query), query: query) as CFTypeRef?
        }
    }
}

/// Searches the default keychain, like Apple's `SecItemCopyMatching`.
///
/// - Parameters:
///   - query: `kSecClass`, attribute filters, `kSecMatchLimit`, `kSecReturn…` keys.
///   - result: Receives `Data` (data or persistent reference alone), `[String: Any]` (attributes,
///     or several return types), or an array of those for `kSecMatchLimitAll`; may be nil.
/// - Returns: `errSecSuccess`, `errSecItemNotFound`, `errSecInteractionNotAllowed`, …
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    status {
        let parsed = try DictionaryTranslation.parse(query)
        if parsed.data != nil { throw KeychainError(.param, "kSecValueData is not valid in a query") }
        let keychain = try DefaultKeychain.keychain()
        let typed = try DictionaryTranslation.query(from: parsed, classOf: keychain.itemClass(of:))
        let results = try keychain.find(typed)
        result?.pointee = DictionaryTranslation.resultValue(results, query: typed) as CFTypeRef?
    }
}

/// Updates every matching item in the default keychain, like Apple's `SecItemUpdate`.
///
/// - Parameters:
///   - query: Which items (`kSecClass` and filters; no `kSecReturn…` keys).
///   - attributesToUpdate: New attribute values and/or `kSecValueData`; class, match and return
///     keys are a parameter error.
/// - Returns: `errSecSuccess`, `errSecItemNotFound`, `errSecDuplicateItem`, `errSecParam` (also
///   for `kSecMatchLimit` in the query, as on the data-protection keychain), …
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    status {
        let parsed = try DictionaryTranslation.parse(query)
        guard parsed.returns.isEmpty, parsed.data == nil, parsed.limit == nil else {
            throw KeychainError(.param, "return keys, match limits and data are not valid in an update query")
        }
        let changes = try DictionaryTranslation.parse(attributesToUpdate)
        guard changes.itemClass == nil, changes.limit == nil, changes.returns.isEmpty, changes.persistentReference == nil,
            changes.synchronizable != .any
        else {
            throw KeychainError(.param, "class, match and return keys are not valid in the attributes to update")
        }
        let keychain = try DefaultKeychain.keychain()
        try keychain.update(
            DictionaryTranslation.query(from: parsed, classOf: keychain.itemClass(of:)), changes: changes.attributes, data: changes.data)
    }
}

/// Deletes every matching item from the default keychain, like Apple's `SecItemDelete`.
///
/// - Parameter query: Which items (`kSecClass` and filters).
/// - Returns: `errSecSuccess`, `errSecItemNotFound`, `errSecInteractionNotAllowed`, `errSecParam`
///   (also for `kSecMatchLimit`, as on the data-protection keychain), …
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    status {
        let parsed = try DictionaryTranslation.parse(query)
        guard parsed.returns.isEmpty, parsed.data == nil, parsed.limit == nil else {
            throw KeychainError(.param, "return keys, match limits and data are not valid in a delete query")
        }
        let keychain = try DefaultKeychain.keychain()
        var typed = try DictionaryTranslation.query(from: parsed, classOf: keychain.itemClass(of:))
        typed.limit = .all
        try keychain.delete(typed)
    }
}

private func status(_ body: () throws -> Void) -> OSStatus {
    do {
        try body()
        return errSecSuccess
    } catch let error as KeychainError {
        return error.code.rawValue
    } catch {
        return errSecNotAvailable
    }
}

import Foundation
import KeychainModel

/// Turns Apple-style dictionaries into typed queries and items, and results back into values.
enum DictionaryTranslation {
    static let returnKeys: [String: ReturnTypes] = [
        kSecReturnData: .data, kSecReturnAttributes: .attributes, kSecReturnPersistentRef: .persistentReference,
    ]

    /// The parts of one dictionary.
    struct Parsed {
        var itemClass: ItemClass?
        var attributes = ItemAttributes()
        var synchronizable: SynchronizableMatch?
        var data: [UInt8]?
        var persistentReference: PersistentReference?
        var limit: MatchLimit?
        var returns: ReturnTypes = []
    }

    static func parse(_ dictionary: [String: Any]) throws(KeychainError) -> Parsed {
        var parsed = Parsed()
        for (key, value) in dictionary {
            switch key {
            case kSecClass:
                guard let code = value as? String else { throw KeychainError(.param, "kSecClass must be a class constant") }
                guard let itemClass = ItemClass(rawValue: code) else { throw KeychainError(.noSuchClass) }
                parsed.itemClass = itemClass
            case kSecValueData:
                parsed.data = try bytes(value, key)
            case kSecValuePersistentRef:
                guard let reference = PersistentReference(bytes: try bytes(value, key)) else {
                    throw KeychainError(.param, "not a persistent reference")
                }
                parsed.persistentReference = reference
            case kSecMatchLimit:
                parsed.limit = try limit(value)
            case kSecReturnRef:
                throw KeychainError(.unimplemented, "kSecReturnRef is not supported")
            case _ where returnKeys[key] != nil:
                if try bool(value, key) { parsed.returns.insert(returnKeys[key]!) }
            case kSecAttrSynchronizable:
                if let text = value as? String, text == kSecAttrSynchronizableAny {
                    parsed.synchronizable = .any
                } else {
                    let flag = try bool(value, key)
                    parsed.synchronizable = flag ? .yes : .no
                    parsed.attributes.synchronizable = flag
                }
            default:
                guard let attribute = Attribute(rawValue: key) else {
                    throw KeychainError(.noSuchAttribute, "unknown key \(key)")
                }
                parsed.attributes[attribute] = try attributeValue(value, for: attribute)
            }
        }
        return parsed
    }

    /// The typed query of a parsed dictionary.
    ///
    /// A persistent reference names one item, as on Apple: `kSecClass` may then be left out (the
    /// item's own class is used, looked up with `classOf`), the synchronizable filter does not
    /// apply, and any other attribute beside the reference is a parameter error.
    static func query(from parsed: Parsed, classOf: (PersistentReference) throws(KeychainError) -> ItemClass?)
        throws(KeychainError) -> Query
    {
        guard let reference = parsed.persistentReference else {
            guard let itemClass = parsed.itemClass else { throw KeychainError(.param, "kSecClass is required") }
            return Query(
                itemClass: itemClass, attributes: parsed.attributes, synchronizable: parsed.synchronizable ?? .no,
                limit: parsed.limit ?? .one, returns: parsed.returns)
        }
        var attributes = parsed.attributes
        attributes[.synchronizable] = nil
        guard attributes.present.isEmpty else {
            throw KeychainError(.param, "kSecValuePersistentRef cannot be combined with other attributes")
        }
        // An unknown reference still goes through the store's search, whose lock check comes first:
        // a locked keychain does not reveal whether the reference exists.
        var itemClass = parsed.itemClass
        if itemClass == nil { itemClass = try classOf(reference) }
        return Query(
            itemClass: itemClass ?? .genericPassword, synchronizable: .any, limit: parsed.limit ?? .one, returns: parsed.returns,
            persistentReference: reference)
    }

    /// The value `SecItemCopyMatching` hands back: one value per result, or a dictionary of them
    /// when several return types were asked for; an array for a limit other than one.
    static func resultValue(_ results: [ItemResult], query: Query) -> Any? {
        if query.returns.isEmpty { return nil }
        let values = results.map { value(of: $0, returns: query.returns) }
        if query.limit == .one { return values.first }
        return values
    }

    static func value(of result: ItemResult, returns: ReturnTypes) -> Any {
        if returns == .data { return Data(result.data ?? []) }
        if returns == .persistentReference { return Data(result.persistentReference?.bytes ?? []) }
        var dictionary = result.attributes.map(attributeDictionary) ?? [:]
        dictionary[kSecClass] = result.itemClass.rawValue
        if let data = result.data { dictionary[kSecValueData] = Data(data) }
        if let reference = result.persistentReference { dictionary[kSecValuePersistentRef] = Data(reference.bytes) }
        return dictionary
    }

    static func attributeDictionary(_ attributes: ItemAttributes) -> [String: Any] {
        var dictionary: [String: Any] = [:]
        for attribute in attributes.present {
            switch attributes[attribute]! {
            case .string(let text): dictionary[attribute.rawValue] = text
            case .data(let bytes): dictionary[attribute.rawValue] = Data(bytes)
            case .integer(let value): dictionary[attribute.rawValue] = Int(value)
            case .bool(let flag): dictionary[attribute.rawValue] = flag
            case .date(let seconds): dictionary[attribute.rawValue] = Date(timeIntervalSince1970: seconds)
            }
        }
        return dictionary
    }

    private static func attributeValue(_ value: Any, for attribute: Attribute) throws(KeychainError) -> AttributeValue {
        switch attribute.kind {
        case .string:
            guard let text = value as? String else { throw KeychainError(.param, "\(attribute.rawValue) must be a string") }
            return .string(text)
        case .data: return .data(try bytes(value, attribute.rawValue))
        case .integer:
            if let number = value as? Int { return .integer(Int64(number)) }
            if let number = value as? NSNumber { return .integer(number.int64Value) }
            throw KeychainError(.param, "\(attribute.rawValue) must be a number")
        case .bool: return .bool(try bool(value, attribute.rawValue))
        case .date:
            guard let date = value as? Date else { throw KeychainError(.param, "\(attribute.rawValue) must be a date") }
            return .date(date.timeIntervalSince1970)
        }
    }

    private static func bytes(_ value: Any, _ key: String) throws(KeychainError) -> [UInt8] {
        if let data = value as? Data { return Array(data) }
        if let bytes = value as? [UInt8] { return bytes }
        throw KeychainError(.param, "\(key) must be data")
    }

    private static func bool(_ value: Any, _ key: String) throws(KeychainError) -> Bool {
        if let flag = value as? Bool { return flag }
        if let number = value as? NSNumber { return number.boolValue }
        throw KeychainError(.param, "\(key) must be a boolean")
    }

    private static func limit(_ value: Any) throws(KeychainError) -> MatchLimit {
        if let text = value as? String {
            switch text {
            case kSecMatchLimitOne: return .one
            case kSecMatchLimitAll: return .all
            default: break
            }
        }
        if let count = value as? Int, count > 0 { return count == 1 ? .one : .count(count) }
        throw KeychainError(.param, "kSecMatchLimit must be kSecMatchLimitOne, kSecMatchLimitAll or a positive number")
    }
}

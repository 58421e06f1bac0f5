import Foundation

/// The attributes of one item or the filters of one query: a typed view over attribute values.
public struct ItemAttributes: Hashable, Sendable, Codable {
    /// The values present, by attribute.
    public private(set) var values: [Attribute: AttributeValue]

    /// Empty attributes.
    public init() {
        values = [:]
    }

    /// Attributes from raw values (kinds are checked by ``validateKinds()``).
    public init(_ values: [Attribute: AttributeValue]) {
        self.values = values
    }

    /// The value of an attribute, or nil when absent.
    public subscript(attribute: Attribute) -> AttributeValue? {
        get { values[attribute] }
        set { values[attribute] = newValue }
    }

    /// True when the attribute is present.
    public func contains(_ attribute: Attribute) -> Bool { values[attribute] != nil }

    /// The attributes present, in stable order.
    public var present: [Attribute] { values.keys.sorted() }

    /// Throws ``KeychainStatus/param`` when a value has the wrong kind for its attribute.
    public func validateKinds() throws(KeychainError) {
        for (attribute, value) in values where value.kind != attribute.kind {
            throw KeychainError(.param, "attribute \(attribute.rawValue) has a value of the wrong type")
        }
        if let attribute = values.first(where: { !$0.value.isInRange })?.key {
            throw KeychainError(.param, "attribute \(attribute.rawValue) has a date outside the years 1 to 9999")
        }
        if let raw = string(.accessible), Accessibility(rawValue: raw) == nil {
            throw KeychainError(.param, "unknown accessibility value")
        }
    }

    func string(_ attribute: Attribute) -> String? {
        if case .string(let text)? = values[attribute] { return text }
        return nil
    }

    func bytes(_ attribute: Attribute) -> [UInt8]? {
        if case .data(let bytes)? = values[attribute] { return bytes }
        return nil
    }

    func integer(_ attribute: Attribute) -> Int64? {
        if case .integer(let value)? = values[attribute] { return value }
        return nil
    }

    func date(_ attribute: Attribute) -> Date? {
        if case .date(let seconds)? = values[attribute] { return Date(timeIntervalSince1970: seconds) }
        return nil
    }

    mutating func set(_ attribute: Attribute, _ value: AttributeValue?) {
        values[attribute] = value
    }
}

extension ItemAttributes {
    /// `kSecAttrAccount`.
    public var account: String? {
        get { string(.account) }
        set { set(.account, newValue.map(AttributeValue.string)) }
    }
    /// `kSecAttrService` (generic passwords).
    public var service: String? {
        get { string(.service) }
        set { set(.service, newValue.map(AttributeValue.string)) }
    }
    /// `kSecAttrLabel`.
    public var label: String? {
        get { string(.label) }
        set { set(.label, newValue.map(AttributeValue.string)) }
    }
    /// `kSecAttrComment`.
    public var comment: String? {
        get { string(.comment) }
        set { set(.comment, newValue.map(AttributeValue.string)) }
    }
    /// `kSecAttrDescription`: the kind of item, for people.
    public var itemDescription: String? {
        get { string(.itemDescription) }
        set { set(.itemDescription, newValue.map(AttributeValue.string)) }
    }
    /// `kSecAttrGeneric`: application-defined bytes.
    public var generic: [UInt8]? {
        get { bytes(.generic) }
        set { set(.generic, newValue.map(AttributeValue.data)) }
    }
    /// `kSecAttrAccessGroup`.
    public var accessGroup: String? {
        get { string(.accessGroup) }
        set { set(.accessGroup, newValue.map(AttributeValue.string)) }
    }
    /// `kSecAttrAccessible`.
    public var accessible: Accessibility? {
        get { string(.accessible).flatMap(Accessibility.init(rawValue:)) }
        set { set(.accessible, newValue.map { .string($0.rawValue) }) }
    }
    /// `kSecAttrSynchronizable` of an item (for queries see ``Query/synchronizable``).
    public var synchronizable: Bool? {
        get {
            if case .bool(let flag)? = values[.synchronizable] { return flag }
            return nil
        }
        set { set(.synchronizable, newValue.map(AttributeValue.bool)) }
    }
    /// `kSecAttrCreationDate`, set by the store.
    public var creationDate: Date? {
        get { date(.creationDate) }
        set { set(.creationDate, newValue.map { .date($0.timeIntervalSince1970) }) }
    }
    /// `kSecAttrModificationDate`, set by the store.
    public var modificationDate: Date? {
        get { date(.modificationDate) }
        set { set(.modificationDate, newValue.map { .date($0.timeIntervalSince1970) }) }
    }
    /// `kSecAttrServer` (internet passwords).
    public var server: String? {
        get { string(.server) }
        set { set(.server, newValue.map(AttributeValue.string)) }
    }
    /// `kSecAttrProtocol`, an Apple four-letter code such as `htps`.
    public var `protocol`: String? {
        get { string(.protocol) }
        set { set(.protocol, newValue.map(AttributeValue.string)) }
    }
    /// `kSecAttrPort`.
    public var port: Int64? {
        get { integer(.port) }
        set { set(.port, newValue.map(AttributeValue.integer)) }
    }
    /// `kSecAttrPath`.
    public var path: String? {
        get { string(.path) }
        set { set(.path, newValue.map(AttributeValue.string)) }
    }
    /// `kSecAttrAuthenticationType`, an Apple four-letter code such as `dflt`.
    public var authenticationType: String? {
        get { string(.authenticationType) }
        set { set(.authenticationType, newValue.map(AttributeValue.string)) }
    }
    /// `kSecAttrSecurityDomain`.
    public var securityDomain: String? {
        get { string(.securityDomain) }
        set { set(.securityDomain, newValue.map(AttributeValue.string)) }
    }
}

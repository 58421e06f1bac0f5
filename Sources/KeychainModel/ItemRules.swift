import Foundation

/// Apple's rules for adding, updating and searching items, as pure functions.
public enum ItemRules {
    /// The access group of items added without one.
    public static let defaultAccessGroup = "default"
    /// The access group of what `sync-client` keeps for itself: the account key of every epoch,
    /// the device's identity keys and its token (`DeviceSecrets`).
    public static let syncClientAccessGroup = "synckeychain.sync-client"
    /// The access group of the Secret Service's items and of its collection and alias records.
    public static let secretServiceAccessGroup = "org.freedesktop.secrets"
    /// The access groups the programs of this product keep for themselves: the `keychain`
    /// command's searches (find, delete, export) leave them out unless `--access-group` names
    /// one of them (decision 0260).
    public static let privateAccessGroups = [syncClientAccessGroup, secretServiceAccessGroup]

    /// Whether `item` is one of the sync client's own secrets (``syncClientAccessGroup``): this
    /// device's alone, never exported and never imported; another device's would break this
    /// one's sync.
    public static func isProductSecret(_ item: Item) -> Bool {
        item.attributes.accessGroup == syncClientAccessGroup
    }

    /// Validates a new item and applies the defaults: accessibility "when unlocked", not
    /// synchronizable, the default access group, empty values for missing key attributes,
    /// creation and modification dates `now`. An item added without data keeps none (Apple's
    /// results then carry no data key).
    /// - Throws: ``KeychainStatus/param`` for wrong value types and for a `ThisDeviceOnly`
    ///   accessibility on a synchronizable item; ``KeychainStatus/noSuchAttribute`` for an
    ///   attribute the class does not have.
    public static func preparedForAdd(_ item: Item, now: Date, defaultAccessGroup: String = defaultAccessGroup)
        throws(KeychainError) -> Item
    {
        try validate(item.attributes, for: item.itemClass)
        var prepared = item
        var attributes = item.attributes
        if attributes.accessible == nil { attributes.accessible = .default }
        if attributes.synchronizable == nil { attributes.synchronizable = false }
        if attributes.accessGroup == nil { attributes.accessGroup = defaultAccessGroup }
        for attribute in item.itemClass.primaryKeyAttributes where attributes[attribute] == nil {
            attributes[attribute] = attribute.emptyValue
        }
        attributes.creationDate = now
        attributes.modificationDate = now
        prepared.attributes = attributes
        try checkThisDeviceOnly(prepared)
        return prepared
    }

    /// Applies an update's changes to a stored item and sets its modification date.
    /// - Parameters:
    ///   - item: The stored item (attributes and, when `data` is given, any data).
    ///   - changes: New attribute values (dates are refused: the store sets them).
    ///   - data: New secret, or nil to keep the current one.
    /// - Throws: ``KeychainStatus/param`` and ``KeychainStatus/noSuchAttribute`` as for an add.
    public static func updated(_ item: Item, changes: ItemAttributes, data: [UInt8]?, now: Date)
        throws(KeychainError) -> Item
    {
        try validateChanges(changes, for: item.itemClass)
        var result = item
        for (attribute, value) in changes.values {
            result.attributes[attribute] = value
        }
        if let data { result.data = data }
        result.attributes.modificationDate = now
        try checkThisDeviceOnly(result)
        return result
    }

    /// Validates an update's attribute changes before any item is touched.
    public static func validateChanges(_ changes: ItemAttributes, for itemClass: ItemClass) throws(KeychainError) {
        try validate(changes, for: itemClass)
        if changes.present.contains(where: Attribute.storeManaged.contains) {
            throw KeychainError(.param, "creation and modification dates are set by the keychain")
        }
    }

    /// Validates a query's filters.
    public static func validate(_ query: Query) throws(KeychainError) {
        try validate(query.attributes, for: query.itemClass)
        if case .count(let count) = query.limit, count < 1 {
            throw KeychainError(.param, "match limit must be at least 1")
        }
    }

    /// Throws when an attribute has the wrong kind or does not belong to the class.
    public static func validate(_ attributes: ItemAttributes, for itemClass: ItemClass) throws(KeychainError) {
        try attributes.validateKinds()
        let allowed = itemClass.allowedAttributes
        if let unknown = attributes.present.first(where: { !allowed.contains($0) }) {
            throw KeychainError(.noSuchAttribute, "attribute \(unknown.rawValue) does not apply to class \(itemClass.rawValue)")
        }
    }

    static func checkThisDeviceOnly(_ item: Item) throws(KeychainError) {
        if item.isSynchronizable && item.accessibility.isThisDeviceOnly {
            throw KeychainError(.param, "a ThisDeviceOnly item cannot be synchronizable")
        }
    }
}

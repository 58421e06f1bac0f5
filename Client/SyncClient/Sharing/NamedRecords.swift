import Foundation
import KeyValueStore
import KeychainCrypto

/// One of the account's own key-value stores used as a table of records by name (contacts'
/// pins, groups): synced end to end to every device of the account, sealed and signed like any
/// store value. A record's key is the first 16 bytes of SHA-256 of its name, in hex (names may be
/// longer than a key); its value is a dictionary of fields that also holds the name (in the field
/// `nameField`), so a value under another name's key is refused as damaged.
struct NamedRecords {
    let storeName: String
    let nameField: String
    private let store: KeyValueStore

    init(session: ClientSession, storeName: String, nameField: String) throws(SyncClientError) {
        self.storeName = storeName
        self.nameField = nameField
        do {
            store = try KeyValueSync.open(session: session).store(named: storeName)
        } catch {
            throw SyncClientError.mapped(error)
        }
    }

    /// Stores `fields` as the record `name`, in place of any before.
    func set(_ fields: [String: KeyValue], named name: String) throws(SyncClientError) {
        try mapping { () throws(KeyValueStoreError) in try store.set(fields, forKey: Self.key(of: name)) }
    }

    /// The fields of the record `name`, if any (one value read).
    func fields(named name: String) throws(SyncClientError) -> [String: KeyValue]? {
        let key = Self.key(of: name)
        return try mapping { () throws(KeyValueStoreError) in try store.value(forKey: key) }.map { value throws(SyncClientError) in
            try checked(value, key: key)
        }
    }

    /// Every record's fields.
    func all() throws(SyncClientError) -> [[String: KeyValue]] {
        let values = try mapping { () throws(KeyValueStoreError) in try store.dictionaryRepresentation() }
        var records: [[String: KeyValue]] = []
        for (key, value) in values { records.append(try checked(value, key: key)) }
        return records
    }

    /// Removes the record `name`.
    func remove(named name: String) throws(SyncClientError) {
        _ = try mapping { () throws(KeyValueStoreError) in try store.removeValue(forKey: Self.key(of: name)) }
    }

    /// The error of a record that does not read: damaged, or written by something else.
    var unreadable: SyncClientError { SyncClientError(.localStorage, "a record in the store \(storeName) cannot be read") }

    /// A stored value as the fields of the record its key names.
    private func checked(_ value: KeyValue, key: String) throws(SyncClientError) -> [String: KeyValue] {
        guard let fields = value.dictionaryValue, let name = fields[nameField]?.stringValue, key == Self.key(of: name) else { throw unreadable }
        return fields
    }

    private func mapping<T>(_ body: () throws(KeyValueStoreError) -> T) throws(SyncClientError) -> T {
        do {
            return try body()
        } catch {
            throw SyncClientError.mapped(error)
        }
    }

    private static func key(of name: String) -> String {
        SharedGroupDirectory.recordKey(of: name)
    }
}

import Crypto
import DurableSQLite
import Foundation

/// Where a device finds the account's shared groups (decisions 0283, 0292, 0295): the account's
/// records of its groups by its own names for them, in its key-value store `synckeychain.groups`
/// (kept by the sync client, synced to every device of the account), and each group's files
/// beside the keychain, named by the group's ID.
public enum SharedGroupDirectory {
    /// The account's store of its group records.
    public static let storeName = "synckeychain.groups"
    /// The field of a record that holds the account's name for the group.
    public static let nameField = "name"
    /// The field of a record that holds the group's ID.
    public static let groupField = "group"

    /// A group's ID as its files, zones and collections name it: lowercase hexadecimal.
    public static func idText(_ group: [UInt8]) -> String { hex(group) }

    /// The key of the record named `name` in a store of named records: the first 16 bytes of
    /// SHA-256 of the name, in hex (names may be longer than a key).
    public static func recordKey(of name: String) -> String {
        hex(SHA256.hash(data: Array(name.utf8)).prefix(16))
    }

    /// The keychain of `group`'s items beside the keychain at `keychainPath`
    /// (`keychain.db` → `keychain.group-<id>.db`).
    public static func keychainPath(of group: [UInt8], besideKeychainAt keychainPath: String) -> String {
        KeyValueDatabase.path(besideKeychainAt: keychainPath, suffix: ".group-\(hex(group)).db")
    }

    /// The database of `group`'s values beside the keychain at `keychainPath`
    /// (`keychain.db` → `keychain.group-<id>.kv.sqlite`).
    public static func valuesPath(of group: [UInt8], besideKeychainAt keychainPath: String) -> String {
        KeyValueDatabase.path(besideKeychainAt: keychainPath, suffix: ".group-\(hex(group)).kv.sqlite")
    }

    /// Whether `name` is the change notice of a group's keychain beside the keychain at
    /// `keychainPath` (what the sync daemon watches for, decision 0295).
    public static func isGroupKeychainNotice(_ name: ArraySlice<UInt8>, besideKeychainAt keychainPath: String) -> Bool {
        let example = ChangeNotice(databasePath: self.keychainPath(of: [], besideKeychainAt: keychainPath)).fileName
        // `keychain.group-.db-changed`: a notice is that with the group's ID in hexadecimal after the dash.
        let dash = example.range(of: ".group-", options: .backwards)!.upperBound
        let prefix = Array(example[..<dash].utf8), suffix = Array(example[dash...].utf8)
        let idLength = name.count - prefix.count - suffix.count
        return idLength > 0 && name.starts(with: prefix) && name.reversed().starts(with: suffix.reversed())
            && name.dropFirst(prefix.count).prefix(idLength).allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }

    /// The ID of the group the account calls `name`, as this device holds the account's records
    /// beside the keychain at `keychainPath`; nil when it holds none by that name (creating nothing).
    /// - Throws: When the record is there but does not read as a group's.
    public static func group(named name: String, besideKeychainAt keychainPath: String) throws(KeyValueStoreError) -> [UInt8]? {
        let path = KeyValueDatabase.path(besideKeychainAt: keychainPath)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let store = try KeyValueDatabase(path: path).store(named: storeName)
        guard let value = try store.value(forKey: recordKey(of: name)) else { return nil }
        guard let fields = value.dictionaryValue, fields[nameField]?.stringValue == name, let group = fields[groupField]?.dataValue else {
            throw KeyValueStoreError(.corruptValue, "the account's record of the group \(name) cannot be read")
        }
        return Array(group)
    }

    /// Every group the account recorded, as this device holds the records beside the keychain at
    /// `keychainPath` (none when it holds no key-value database; nothing is created), by name.
    /// A record that does not read as a group's is left out.
    public static func groups(besideKeychainAt keychainPath: String) throws(KeyValueStoreError) -> [(name: String, group: [UInt8])] {
        let path = KeyValueDatabase.path(besideKeychainAt: keychainPath)
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        let records = try KeyValueDatabase(path: path).store(named: storeName).dictionaryRepresentation()
        return records.compactMap { key, value in
            guard let fields = value.dictionaryValue, let name = fields[nameField]?.stringValue, recordKey(of: name) == key,
                let group = fields[groupField]?.dataValue
            else { return nil }
            return (name, Array(group))
        }.sorted { Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8)) }
    }

    /// Whether `name` is the change notice of the account's key-value database beside the
    /// keychain at `keychainPath`, where its group records are (what the Secret Service watches
    /// for a group joined or left).
    public static func isRecordsNotice(_ name: ArraySlice<UInt8>, besideKeychainAt keychainPath: String) -> Bool {
        name.elementsEqual(ChangeNotice(databasePath: KeyValueDatabase.path(besideKeychainAt: keychainPath)).fileName.utf8)
    }

    private static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in bytes { text += [digits[Int(byte >> 4)], digits[Int(byte & 15)]] }
        return String(decoding: text, as: UTF8.self)
    }
}

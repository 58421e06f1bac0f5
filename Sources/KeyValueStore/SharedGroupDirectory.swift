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
    /// The field of a record that holds what the account may do in the group (``Standing``).
    public static let standingField = "standing"

    /// What the account may do in a group, as the group log said when a device of the account
    /// last verified it (decision 0299).
    public enum Standing: String, Sendable {
        /// Read and change the group's items and values (an owner, admin or member).
        case writes
        /// Read them only (a viewer): a change is refused on the device, before the server's refusal.
        case reads
        /// Nothing: the account left the group or was removed; its devices keep nothing of it.
        case departed
    }

    /// A group the account recorded, as a device reads its record.
    public struct Recorded: Sendable, Equatable {
        /// The account's name for the group.
        public var name: String
        public var group: [UInt8]
        public var standing: Standing

        /// Why the group's keychain takes no change on this device, when the account only reads
        /// the group (its keychain's `refusesChanges`).
        public var refusesChanges: String? {
            standing == .reads ? "this account is a viewer of the group \(name): it reads the group's items but may not change them" : nil
        }
    }

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
        group(inFileName: name, besideKeychainAt: keychainPath, suffixes: [ChangeNotice(databasePath: ".db").path]) != nil
    }

    /// The group whose file beside the keychain at `keychainPath` is called `name`: the
    /// keychain's name less its extension, `.group-`, the group's ID in hexadecimal, then one of
    /// `suffixes`; nil for any other name.
    private static func group(inFileName name: ArraySlice<UInt8>, besideKeychainAt keychainPath: String, suffixes: [String]) -> [UInt8]? {
        let prefix = Array(URL(fileURLWithPath: keychainPath).deletingPathExtension().lastPathComponent.utf8) + Array(".group-".utf8)
        guard name.starts(with: prefix) else { return nil }
        let rest = name.dropFirst(prefix.count)
        for suffix in suffixes.map({ Array($0.utf8) }) where rest.count > suffix.count && rest.reversed().starts(with: suffix.reversed()) {
            if let group = bytes(ofHex: rest.dropLast(suffix.count)) { return group }
        }
        return nil
    }

    /// The group the account calls `name`, as this device holds the account's records beside the
    /// keychain at `keychainPath`; nil when it holds none by that name (creating nothing).
    /// - Throws: When the record is there but does not read as a group's.
    public static func group(named name: String, besideKeychainAt keychainPath: String) throws(KeyValueStoreError) -> Recorded? {
        let path = KeyValueDatabase.path(besideKeychainAt: keychainPath)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let store = try KeyValueDatabase(path: path).store(named: storeName)
        guard let value = try store.value(forKey: recordKey(of: name)) else { return nil }
        guard let recorded = recorded(value, key: recordKey(of: name)), recorded.name == name else {
            throw KeyValueStoreError(.corruptValue, "the account's record of the group \(name) cannot be read")
        }
        return recorded
    }

    /// Every group the account recorded, as this device holds the records beside the keychain at
    /// `keychainPath` (none when it holds no key-value database; nothing is created), by name.
    /// A record that does not read as a group's is left out.
    public static func groups(besideKeychainAt keychainPath: String) throws(KeyValueStoreError) -> [Recorded] {
        let path = KeyValueDatabase.path(besideKeychainAt: keychainPath)
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        let records = try KeyValueDatabase(path: path).store(named: storeName).dictionaryRepresentation()
        return records.compactMap { recorded($1, key: $0) }.sorted { Array($0.name.utf8).lexicographicallyPrecedes(Array($1.name.utf8)) }
    }

    /// A record read as a group's, when it is one stored under its name's key.
    private static func recorded(_ value: KeyValue, key: String) -> Recorded? {
        guard let fields = value.dictionaryValue, let name = fields[nameField]?.stringValue, recordKey(of: name) == key,
            let group = fields[groupField]?.dataValue
        else { return nil }
        guard let standing = standing(in: fields) else { return nil }
        return Recorded(name: name, group: Array(group), standing: standing)
    }

    /// The standing a record's `fields` hold; one written before decision 0299 holds none and is
    /// a writer's. Nil when the field does not read.
    public static func standing(in fields: [String: KeyValue]) -> Standing? {
        guard let field = fields[standingField] else { return .writes }
        return field.stringValue.flatMap(Standing.init(rawValue:))
    }

    /// The groups whose files (a keychain or values) are beside the keychain at `keychainPath`.
    public static func groupsWithFiles(besideKeychainAt keychainPath: String) -> [[UInt8]] {
        let directory = URL(fileURLWithPath: keychainPath).deletingLastPathComponent().path
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        let found = names.compactMap { group(inFileName: Array($0.utf8)[...], besideKeychainAt: keychainPath, suffixes: [".db", ".kv.sqlite"]) }
        return Set(found).sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// Removes `group`'s keychain and values beside the keychain at `keychainPath`, with the
    /// files SQLite and the keychain keep beside them (decision 0299).
    /// - Returns: Whether there was anything to remove.
    /// - Throws: When a file is there and cannot be removed.
    @discardableResult
    public static func removeFiles(of group: [UInt8], besideKeychainAt keychainPath: String) throws(KeyValueStoreError) -> Bool {
        var removed = false
        for database in [self.keychainPath(of: group, besideKeychainAt: keychainPath), valuesPath(of: group, besideKeychainAt: keychainPath)] {
            // The database last: a removal cut short is finished when the database is still there.
            let beside = ["-wal", "-shm", ".devicekey", ".lock"].map { database + $0 } + [ChangeNotice(databasePath: database).path]
            for path in beside + [database]
            where FileManager.default.fileExists(atPath: path) {
                do {
                    try FileManager.default.removeItem(atPath: path)
                } catch {
                    throw KeyValueStoreError(.storage, "cannot remove the group's file \(path)")
                }
                removed = true
            }
        }
        return removed
    }

    /// Whether `name` is the change notice of the account's key-value database beside the
    /// keychain at `keychainPath`, where its group records are (what the Secret Service watches
    /// for a group joined or left).
    public static func isRecordsNotice(_ name: ArraySlice<UInt8>, besideKeychainAt keychainPath: String) -> Bool {
        name.elementsEqual(ChangeNotice(databasePath: KeyValueDatabase.path(besideKeychainAt: keychainPath)).fileName.utf8)
    }

    /// The bytes lowercase hexadecimal `text` spells; nil for anything else (or nothing).
    private static func bytes(ofHex text: ArraySlice<UInt8>) -> [UInt8]? {
        guard !text.isEmpty, text.count % 2 == 0 else { return nil }
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            guard let high = value(text[index]), let low = value(text[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in bytes { text += [digits[Int(byte >> 4)], digits[Int(byte & 15)]] }
        return String(decoding: text, as: UTF8.self)
    }
}

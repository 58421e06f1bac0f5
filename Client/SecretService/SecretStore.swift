import Crypto
import Foundation
import KeychainCrypto
import KeychainModel
import KeychainStore
import Synchronization

/// Secret Service items over the local keychain (decision 0140): each item is a generic password
/// in the access group `org.freedesktop.secrets` whose service is its collection's name and whose
/// account is its ID (derived from the collection and the attribute set, decision 0268); the label
/// is the item's label, the generic attribute its attribute dictionary (canonical JSON), the
/// description its content type. Items of every persisted
/// collection are synchronizable ("when unlocked": locking the keychain locks them); collections
/// and aliases are recorded beside them (``SecretStore+Collections``, decision 0141). Secrets
/// are read from the keychain only when asked for.
final class SecretStore: @unchecked Sendable {
    /// What the service knows of an item without its secret.
    struct Entry: Equatable {
        var id: String
        var collection: String
        var label: String
        var attributes: [String: String]
        var contentType: String
        var created: UInt64
        var modified: UInt64
    }

    static let accessGroup = ItemRules.secretServiceAccessGroup
    /// The synchronizable collection the `default` alias names.
    static let login = "login"

    /// The account's keychain: every collection's but the shared groups'.
    let keychain: Keychain
    /// The shared groups' collections (``SecretStore+Groups``, decision 0296).
    let groups = Mutex<[String: SharedCollection]>([:])

    init(keychain: Keychain) {
        self.keychain = keychain
        refreshGroups()
    }


    /// The secret of item `id` and its content type, in one query.
    func secret(of id: String, in collection: String) throws(BusError) -> (secret: [UInt8], contentType: String) {
        do {
            guard let found = try keychain(for: collection).find(query(collection, id: id, returns: [.data, .attributes])).first, let data = found.data else {
                throw BusError.noSuchObject(id)
            }
            return (data, found.attributes?.itemDescription ?? "text/plain")
        } catch let error as KeychainError {
            throw Self.mapped(error, id: id)
        } catch {
            throw error as? BusError ?? .failed("cannot read the secret")
        }
    }

    /// Item `id` without its secret, or nil when there is none.
    func entry(_ id: String, in collection: String) throws(BusError) -> Entry? {
        do {
            return try keychain(for: collection).find(query(collection, id: id, returns: .attributes)).first?.attributes.flatMap { Self.entry(collection, $0) }
        } catch where error.code == .itemNotFound {
            return nil
        } catch {
            throw Self.mapped(error, id: id)
        }
    }

    /// Adds an item named `id`; returns its entry, or nil when the collection has an item of that
    /// ID already.
    func add(
        _ id: String, to collection: String, label: String, attributes: [String: String], secret: [UInt8], contentType: String
    ) throws(BusError) -> Entry? {
        let item = Item.genericPassword(service: collection, account: id, data: secret) { item in
            item.accessGroup = Self.accessGroup
            item.synchronizable = true
            item.label = label
            item.itemDescription = contentType
            item.generic = Self.encode(attributes)
        }
        do {
            let stored = try keychain(for: collection).add(item)
            return Self.entry(collection, stored) ?? Entry(id: id, collection: collection, label: label, attributes: attributes,
                                                           contentType: contentType, created: 0, modified: 0)
        } catch where error.code == .duplicateItem {
            return nil
        } catch {
            throw Self.mapped(error)
        }
    }

    /// Deletes item `id`, keeping its label and secret as a version in the history of item
    /// `kept` (``keychain history``): a second item of `kept`'s attribute set, which a store
    /// folds into it (decision 0268).
    func fold(_ id: String, into kept: String, in collection: String) throws(BusError) {
        do {
            let keychain = keychain(for: collection)
            guard let found = try keychain.find(query(collection, id: id, returns: [.data, .attributes])).first,
                var attributes = found.attributes
            else { return }
            attributes.account = kept
            try keychain.recordHistoryVersion(Item(itemClass: .genericPassword, attributes: attributes, data: found.data))
            try keychain.delete(query(collection, id: id))
        } catch where error.code == .itemNotFound {
            return
        } catch {
            throw Self.mapped(error, id: id)
        }
    }

    /// Changes an item's label, attributes and/or secret.
    func update(_ id: String, in collection: String, label: String? = nil, attributes: [String: String]? = nil,
                secret: (value: [UInt8], contentType: String)? = nil) throws(BusError) {
        var changes = ItemAttributes()
        if let label { changes.label = label }
        if let attributes { changes.generic = Self.encode(attributes) }
        if let secret { changes.itemDescription = secret.contentType }
        do {
            try keychain(for: collection).update(query(collection, id: id), changes: changes, data: secret?.value)
        } catch {
            throw Self.mapped(error, id: id)
        }
    }

    func delete(_ id: String, in collection: String) throws(BusError) {
        do {
            try keychain(for: collection).delete(query(collection, id: id))
        } catch {
            throw Self.mapped(error, id: id)
        }
    }

    var isLocked: Bool { (try? keychain.lockStatus().isLocked) ?? true }

    /// Items of the access group; of `collection` (its service) and with account `id` when given.
    func query(_ collection: String? = nil, id: String? = nil, limit: MatchLimit = .one, returns: ReturnTypes = []) -> Query {
        var attributes = ItemAttributes()
        attributes.accessGroup = Self.accessGroup
        if let collection { attributes.service = collection }
        if let id { attributes.account = id }
        return Query(itemClass: .genericPassword, attributes: attributes, synchronizable: .any, limit: limit, returns: returns)
    }

    static func entry(_ collection: String, _ attributes: ItemAttributes) -> Entry? {
        guard let id = attributes.account else { return nil }
        return Entry(
            id: id, collection: collection, label: attributes.label ?? "", attributes: decode(attributes.generic),
            contentType: attributes.itemDescription ?? "text/plain",
            created: UInt64(max(0, attributes.creationDate?.timeIntervalSince1970 ?? 0)),
            modified: UInt64(max(0, attributes.modificationDate?.timeIntervalSince1970 ?? 0)))
    }

    /// 128 random bits in lower-case hex: a valid element of an object path, the same on every
    /// machine the item syncs to: the ID of the items stored before decision 0268, and of a new
    /// item whose ``id(for:in:)`` another item holds (one whose attributes changed since).
    static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }.hexString
    }

    /// The ID of the item that holds `attributes` in `collection` (decision 0268): the first 128
    /// bits of SHA-256 over the collection and the attribute set. Every machine names an attribute
    /// set the same, so the stores of one set on two machines are writes of one keychain item, and
    /// sync meets them as a conflict of that item.
    static func id(for attributes: [String: String], in collection: String) -> String {
        Array(SHA256.hash(data: naming(attributes, in: collection, as: "org.freedesktop.secrets item id v1")).prefix(16)).hexString
    }

    /// A new ID for another item of `attributes` in `collection`, made by a store that asked not to
    /// replace one (decision 0303): 64 random bits, then the first 64 bits of SHA-256 over them and
    /// the set (hashed as ``id(for:in:)`` does). Any machine can tell such an item from a second item
    /// of the set that nobody asked for, and no fold takes it while it holds the set.
    static func anotherID(for attributes: [String: String], in collection: String) -> String {
        var generator = SystemRandomNumberGenerator()
        let nonce = (0..<8).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return (nonce + tag(nonce, attributes, collection)).hexString
    }

    /// Whether `id` names an item of `attributes` in `collection` on its own: the ID the set
    /// derives (``id(for:in:)``), or one a store made as another item of the set (``anotherID(for:in:)``).
    static func standsAlone(_ id: String, holding attributes: [String: String], in collection: String) -> Bool {
        if id == self.id(for: attributes, in: collection) { return true }
        guard let bytes = [UInt8](hexString: id), bytes.count == 16 else { return false }
        return bytes[8...].elementsEqual(tag(Array(bytes[..<8]), attributes, collection))
    }

    private static func tag(_ nonce: [UInt8], _ attributes: [String: String], _ collection: String) -> [UInt8] {
        Array(SHA256.hash(data: nonce + naming(attributes, in: collection, as: "org.freedesktop.secrets another item v1")).prefix(8))
    }

    /// `label`, then the collection and the attribute set: each string in Unicode's canonical
    /// composition (NFC: the strings Swift compares as equal are one) and length-prefixed, the
    /// pairs in the byte order of their names.
    private static func naming(_ attributes: [String: String], in collection: String, as label: String) -> [UInt8] {
        var message = Array(label.utf8)
        func append(_ text: String) {
            let bytes = Array(text.precomposedStringWithCanonicalMapping.utf8)
            withUnsafeBytes(of: UInt32(bytes.count).bigEndian) { message += $0 }
            message += bytes
        }
        append(collection)
        let pairs = attributes.map { (name: Array($0.key.precomposedStringWithCanonicalMapping.utf8), value: $0.value) }
            .sorted { $0.name.lexicographicallyPrecedes($1.name) }
        withUnsafeBytes(of: UInt32(pairs.count).bigEndian) { message += $0 }
        for pair in pairs {
            append(String(decoding: pair.name, as: UTF8.self))
            append(pair.value)
        }
        return message
    }

    static func encode(_ attributes: [String: String]) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array((try? encoder.encode(attributes)) ?? Data("{}".utf8))
    }

    static func decode(_ bytes: [UInt8]?) -> [String: String] {
        guard let bytes, let map = try? JSONDecoder().decode([String: String].self, from: Data(bytes)) else { return [:] }
        return map
    }

    static func mapped(_ error: KeychainError, id: String? = nil) -> BusError {
        switch error.code {
        case .interactionNotAllowed: return .isLocked
        case .itemNotFound: return .noSuchObject(id ?? "item")
        case .duplicateItem: return .failed("an item with this ID exists")
        case .readOnly: return .notSupported(error.message)
        default: return .failed("keychain: \(error.message)")
        }
    }
}

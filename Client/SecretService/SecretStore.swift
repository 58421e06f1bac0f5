import Foundation
import KeychainModel
import KeychainStore

/// Secret Service items over the local keychain (decision 0140): each item is a generic password
/// in the access group `org.freedesktop.secrets` whose service is its collection's name and whose
/// account is its ID; the label is the item's label, the generic attribute its attribute
/// dictionary (canonical JSON), the description its content type. Items of every persisted
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

    let keychain: Keychain

    init(keychain: Keychain) { self.keychain = keychain }


    /// The secret of item `id` and its content type, in one query.
    func secret(of id: String, in collection: String) throws(BusError) -> (secret: [UInt8], contentType: String) {
        do {
            guard let found = try keychain.find(query(collection, id: id, returns: [.data, .attributes])).first, let data = found.data else {
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
            return try keychain.find(query(collection, id: id, returns: .attributes)).first?.attributes.flatMap { Self.entry(collection, $0) }
        } catch where error.code == .itemNotFound {
            return nil
        } catch {
            throw Self.mapped(error, id: id)
        }
    }

    /// Adds an item; returns its entry.
    func add(to collection: String, label: String, attributes: [String: String], secret: [UInt8], contentType: String) throws(BusError) -> Entry {
        let id = Self.newID()
        let item = Item.genericPassword(service: collection, account: id, data: secret) { item in
            item.accessGroup = Self.accessGroup
            item.synchronizable = true
            item.label = label
            item.itemDescription = contentType
            item.generic = Self.encode(attributes)
        }
        do {
            let stored = try keychain.add(item)
            return Self.entry(collection, stored) ?? Entry(id: id, collection: collection, label: label, attributes: attributes,
                                                           contentType: contentType, created: 0, modified: 0)
        } catch {
            throw Self.mapped(error)
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
            try keychain.update(query(collection, id: id), changes: changes, data: secret?.value)
        } catch {
            throw Self.mapped(error, id: id)
        }
    }

    func delete(_ id: String, in collection: String) throws(BusError) {
        do {
            try keychain.delete(query(collection, id: id))
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
    /// machine the item syncs to.
    static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
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
        default: return .failed("keychain: \(error.message)")
        }
    }
}

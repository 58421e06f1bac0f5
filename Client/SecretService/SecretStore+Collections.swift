import Foundation
import KeychainModel
import KeychainStore

/// Collections and aliases in the keychain (decision 0141), beside the items, in the same access
/// group and synchronizable like them: a collection is the service name its items share, plus a
/// record item (account `collection`, its label the collection's label) so that an empty
/// collection exists too; an alias is an item of the collection it names, account `alias:NAME`.
/// Item IDs are 32 hex digits, so neither account can be an item's.
extension SecretStore {
    static let collectionAccount = "collection"
    static let aliasPrefix = "alias:"

    /// Every persisted collection, its items and the aliases, in one keychain query; then each
    /// shared group's collection and its items, one query each (decision 0296).
    func contents() throws(BusError) -> CollectionIndex {
        let results: [ItemResult]
        do {
            results = try keychain.find(query(limit: .all, returns: .attributes))
        } catch where error.code == .itemNotFound {
            results = []
        } catch {
            throw Self.mapped(error)
        }
        var index = CollectionIndex()
        var records: [(String, CollectionIndex.Collection)] = []
        for case let attributes? in results.map(\.attributes) {
            // A service that cannot be an element of an object path is no collection of ours.
            guard let collection = attributes.service, Self.isPathElement(collection), let account = attributes.account else { continue }
            let modified = UInt64(max(0, attributes.modificationDate?.timeIntervalSince1970 ?? 0))
            if account == Self.collectionAccount {
                let created = UInt64(max(0, attributes.creationDate?.timeIntervalSince1970 ?? 0))
                records.append((collection, .init(label: attributes.label ?? collection, created: created, modified: modified)))
            } else if account.hasPrefix(Self.aliasPrefix) {
                index.addAlias(String(account.dropFirst(Self.aliasPrefix.count)), collection: collection, modified: modified)
            } else if Self.isPathElement(account), let entry = Self.entry(collection, attributes) {
                index.add(entry)
            }
        }
        for (name, record) in records { index.addCollection(name, record) }
        for (name, group) in sharedCollections {
            index.addCollection(name, .init(label: group.label, created: 0, modified: 0))
            let results: [ItemResult]
            do {
                results = try group.keychain.find(query(name, limit: .all, returns: .attributes))
            } catch where error.code == .itemNotFound {
                continue
            } catch {
                throw Self.mapped(error)
            }
            for case let attributes? in results.map(\.attributes) {
                if let account = attributes.account, Self.isPathElement(account), let entry = Self.entry(name, attributes) { index.add(entry) }
            }
        }
        return index
    }

    /// Records a new collection named `name` (an unused path element) with `label`.
    func createCollection(_ name: String, label: String) throws(BusError) {
        try addRecord(collection: name, account: Self.collectionAccount, label: label)
    }

    /// Sets a collection's label, recording the collection if it had no record (`login`).
    func setLabel(_ label: String, of collection: String) throws(BusError) {
        var changes = ItemAttributes()
        changes.label = label
        do {
            try keychain.update(query(collection, id: Self.collectionAccount), changes: changes)
        } catch where error.code == .itemNotFound {
            try addRecord(collection: collection, account: Self.collectionAccount, label: label)
        } catch {
            throw Self.mapped(error)
        }
    }

    /// Deletes a collection: its items, its record and the aliases naming it, in one transaction.
    func deleteCollection(_ name: String) throws(BusError) {
        do {
            try keychain.delete(query(name, limit: .all))
        } catch where error.code == .itemNotFound {
            return
        } catch {
            throw Self.mapped(error)
        }
    }

    /// Points `alias` at `collection`, or removes it when `collection` is nil.
    func setAlias(_ alias: String, to collection: String?) throws(BusError) {
        do {
            try keychain.delete(query(id: Self.aliasPrefix + alias, limit: .all))
        } catch where error.code == .itemNotFound {
        } catch {
            throw Self.mapped(error)
        }
        if let collection { try addRecord(collection: collection, account: Self.aliasPrefix + alias, label: alias) }
    }

    private func addRecord(collection: String, account: String, label: String) throws(BusError) {
        let item = Item.genericPassword(service: collection, account: account, data: []) { item in
            item.accessGroup = Self.accessGroup
            item.synchronizable = true
            item.label = label
        }
        do {
            try keychain.add(item)
        } catch {
            throw Self.mapped(error)
        }
    }

    /// Whether `text` may be one element of a D-Bus object path: `[A-Za-z0-9_]+`.
    static func isPathElement(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x5F
        }
    }

    /// The name of a new collection labelled `label`: its letters and digits in lower case, other
    /// characters as `_`, and `_2`, `_3`… when the name is taken (`session` is always taken).
    static func newCollectionName(label: String, taken: Set<String>) -> String {
        let base = String(label.lowercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
        let stem = base.isEmpty ? "collection" : base
        var name = stem
        var counter = 1
        while taken.contains(name) || name == "session" {
            counter += 1
            name = "\(stem)_\(counter)"
        }
        return name
    }
}

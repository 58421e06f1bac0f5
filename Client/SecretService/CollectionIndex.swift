/// What the service read of its persisted collections (decision 0141): their items (attributes,
/// labels, dates; never secrets), the collections themselves and the aliases naming them. A pure
/// value: ``changes(to:)`` says what a fresh read changed, which the service signals.
struct CollectionIndex {
    /// A persisted collection as the keychain records it.
    struct Collection: Equatable {
        var label: String
        var created: UInt64
        var modified: UInt64
    }

    /// One thing a fresh read found changed, in the order it is signalled.
    enum Change: Equatable {
        enum Kind: String { case created = "Created", changed = "Changed", deleted = "Deleted" }
        case collection(String, Kind)
        case item(collection: String, id: String, Kind)
    }

    /// Items by ID.
    var items: [String: SecretStore.Entry] = [:]
    /// Persisted collections by name; `login` is always one.
    var collections: [String: Collection] = [SecretStore.login: Collection(label: "Login", created: 0, modified: 0)]
    /// Alias → collection name, with when it was set (two devices may set one alias each: the
    /// later setting wins, then the collection whose name sorts first).
    private(set) var aliases: [String: (collection: String, modified: UInt64)] = [:]

    /// The items of `collection`.
    func entries(in collection: String) -> [SecretStore.Entry] {
        items.values.filter { $0.collection == collection }
    }

    /// The collection `alias` names: a stored alias, else `default` names `login`.
    func collection(named alias: String) -> String? {
        if let stored = aliases[alias], collections[stored.collection] != nil { return stored.collection }
        return alias == "default" ? SecretStore.login : nil
    }

    /// The aliases that name `collection` (`default` included when it falls back to `login`).
    func aliases(of collection: String) -> [String] {
        var names = aliases.filter { $0.value.collection == collection }.map(\.key)
        if collection == SecretStore.login, aliases["default"] == nil { names.append("default") }
        return names.sorted()
    }

    mutating func add(_ entry: SecretStore.Entry) {
        items[entry.id] = entry
        if collections[entry.collection] == nil {
            collections[entry.collection] = Collection(label: entry.collection, created: entry.created, modified: entry.modified)
        }
        if entry.collection == SecretStore.login, collections[SecretStore.login]?.created == 0 {
            collections[SecretStore.login]?.created = entry.created
        }
    }

    /// A collection's own record (its label and dates) overrides what its items suggested.
    mutating func addCollection(_ name: String, _ record: Collection) {
        collections[name] = record
    }

    mutating func addAlias(_ alias: String, collection: String, modified: UInt64) {
        if let existing = aliases[alias],
            existing.modified > modified || (existing.modified == modified && existing.collection <= collection)
        {
            return
        }
        aliases[alias] = (collection, modified)
    }

    /// What differs in `new`: collections created, items created, changed or deleted, collections
    /// changed (label) and deleted.
    func changes(to new: CollectionIndex) -> [Change] {
        var changes: [Change] = []
        for name in new.collections.keys.sorted() where collections[name] == nil { changes.append(.collection(name, .created)) }
        for (id, entry) in new.items.sorted(by: { $0.key < $1.key }) where items[id] != entry {
            changes.append(.item(collection: entry.collection, id: id, items[id] == nil ? .created : .changed))
        }
        for (id, entry) in items.sorted(by: { $0.key < $1.key }) where new.items[id] == nil {
            changes.append(.item(collection: entry.collection, id: id, .deleted))
        }
        for (name, record) in new.collections.sorted(by: { $0.key < $1.key }) {
            if let old = collections[name], old.label != record.label { changes.append(.collection(name, .changed)) }
        }
        for name in collections.keys.sorted() where new.collections[name] == nil { changes.append(.collection(name, .deleted)) }
        return changes
    }
}

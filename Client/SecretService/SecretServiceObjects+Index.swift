/// The index of the persisted collections: read from the keychain when another process wrote,
/// kept current by the service's own writes, searched in memory; what changed is signalled.
extension SecretServiceObjects {
    /// The index, read again when another process committed since (this service's own writes
    /// keep it current themselves); without a watcher it is read again on every call. While the
    /// keychain is locked, what was read before still stands (its items are listed as locked).
    func current() throws(BusError) -> CollectionIndex {
        let version = externalVersion()
        if keepsIndex, let index, version == indexVersion { return index }
        do {
            try reload(version: version)
        } catch where error == .isLocked {
            guard index != nil else { throw error }
        }
        return index ?? CollectionIndex()
    }

    /// The items of `collection`.
    func entries(in collection: String) throws(BusError) -> [SecretStore.Entry] {
        if collection == Self.session { return memoryItems.values.map(\.entry) }
        return try current().entries(in: collection)
    }

    /// Another process may have written (the watcher saw the keychain's files change, e.g.
    /// `sync-client run` applying another device's change, or the account's group records):
    /// reads the groups and the keychains again if so, signals what changed, and folds what left
    /// two items of one attribute set.
    func keychainChanged() {
        store.refreshGroups()
        let version = externalVersion()
        guard version != indexVersion else { return }
        try? reload(version: version)
        try? foldSameAttributeSets()
    }

    /// Reads the index again after this service changed collections or aliases, signalling what
    /// changed.
    func refresh() throws(BusError) {
        try reload(version: externalVersion())
    }

    /// Reads the persisted collections again; when they had been read before, signals what changed.
    private func reload(version: Int64) throws(BusError) {
        let fresh = try store.contents()
        if let old = index {
            for change in old.changes(to: fresh) { signal(change) }
        }
        index = fresh
        indexVersion = version
    }

    private func externalVersion() -> Int64 { store.externalChangeCounter() }

    /// Items matching every attribute in `wanted`, of `collection` or of every collection; the
    /// newest first. A locked keychain's items are left out when it was never read.
    func search(_ wanted: [String: String], in collection: String?) throws(BusError) -> [SecretStore.Entry] {
        var candidates: [SecretStore.Entry] = []
        if collection == nil || collection == Self.session { candidates += memoryItems.values.map(\.entry) }
        if collection != Self.session {
            do {
                let index = try current()
                candidates += collection.map { index.entries(in: $0) } ?? Array(index.items.values)
            } catch where error == .isLocked {}
        }
        return candidates.filter { entry in wanted.allSatisfy { entry.attributes[$0.key] == $0.value } }
            .sorted { $0.created == $1.created ? $0.id < $1.id : $0.created > $1.created }
    }

    /// Emits the signal for `change`: ItemCreated/ItemChanged/ItemDeleted on the collection,
    /// CollectionCreated/CollectionChanged/CollectionDeleted on the service.
    func signal(_ change: CollectionIndex.Change) {
        switch change {
        case .collection(let name, let kind):
            connection?.emit(path: Self.root, interface: Self.serviceInterface, member: "Collection" + kind.rawValue) { writer throws(BusError) in
                try writer.objectPath(Self.path(collection: name))
            }
        case .item(let collection, let id, let kind):
            connection?.emit(path: Self.path(collection: collection), interface: Self.collectionInterface, member: "Item" + kind.rawValue) {
                writer throws(BusError) in
                try writer.objectPath(Self.path(collection: collection, item: id))
            }
        }
    }
}

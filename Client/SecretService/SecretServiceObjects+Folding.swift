/// One attribute set in one collection is one item unless a client asked for another (decisions
/// 0268, 0303). A store folds the set's items into one (``createItem(in:_:secret:replacing:)``); so
/// does any other change that leaves two items of one set (decision 0278): an item arriving through
/// sync beside one of its set (an item whose attributes a client changed keeps the ID of its earlier
/// set, while another machine named its own item after the new set), or an item's attributes
/// changed here to those of another item. A fold never takes an item that stands alone
/// (``SecretStore/standsAlone(_:holding:in:)``): the one named after the set, and those a store made
/// as another item of it. Every machine folds a set the same way, so the machines that fold it agree.
extension SecretServiceObjects {
    /// The item that stands for `same` (the items of one set): the one named after the set, else
    /// the newest; nil for no items.
    static func keptItem(of same: [SecretStore.Entry], named id: String) -> SecretStore.Entry? {
        same.first { $0.id == id } ?? newest(of: same)
    }

    private static func newest(of same: [SecretStore.Entry]) -> SecretStore.Entry? {
        same.max { ($0.modified, $0.id) < ($1.modified, $1.id) }
    }

    /// The items of `same` (one set of `collection`) that a fold takes into `kept`: all but `kept`
    /// and those that stand alone.
    static func folded(_ same: [SecretStore.Entry], into kept: SecretStore.Entry, in collection: String) -> [SecretStore.Entry] {
        same.filter { $0.id != kept.id && !SecretStore.standsAlone($0.id, holding: $0.attributes, in: collection) }
    }

    /// Folds `others` into item `kept` of `collection`: each one's label and secret go to the
    /// item's history (``SecretStore/fold(_:into:in:)``), and it is signalled deleted.
    func fold(_ others: [SecretStore.Entry], into kept: String, in collection: String) throws(BusError) {
        for other in others {
            if collection == Self.session {
                memoryItems[other.id] = nil
            } else {
                try store.fold(other.id, into: kept, in: collection)
                index?.items[other.id] = nil
            }
            signal(.item(collection: collection, id: other.id, .deleted))
        }
    }

    /// Folds each attribute set of the persisted collections that has more than one item: the
    /// item kept takes the newest folded one's label and secret when it is newer, as a store of
    /// that one would.
    func foldSameAttributeSets() throws(BusError) {
        guard let index else { return }
        struct AttributeSet: Hashable {
            var collection: String
            var attributes: [String: String]
        }
        let sets = Dictionary(grouping: index.items.values) { AttributeSet(collection: $0.collection, attributes: $0.attributes) }
        for (set, same) in sets where same.count > 1 {
            guard let kept = Self.keptItem(of: same, named: SecretStore.id(for: set.attributes, in: set.collection)) else { continue }
            let others = Self.folded(same, into: kept, in: set.collection)
            if let newest = Self.newest(of: others), newest.modified > kept.modified {
                let secret = try store.secret(of: newest.id, in: set.collection)
                try change(set.collection, kept.id, label: newest.label, secret: (secret.secret, secret.contentType))
            }
            try fold(others, into: kept.id, in: set.collection)
        }
    }
}

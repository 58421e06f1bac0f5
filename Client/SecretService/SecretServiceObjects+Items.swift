import Foundation

/// The Item interface, and items in either kind of collection: the keychain for persisted ones,
/// this process's memory for `session`.
extension SecretServiceObjects {
    func item(_ collection: String, _ id: String, _ call: BusCall, reply: BusWriter) throws(BusError) {
        guard call.interface == Self.itemInterface || call.interface.isEmpty else { throw .unknownMethod(call.interface, call.member) }
        let arguments = call.arguments
        switch call.member {
        case "GetSecret":
            let sessionPath = try arguments.objectPath()
            let session = try transport(sessionPath, for: call.sender)
            let value = try secret(collection, id)
            try reply.secret(try session.encode(value.secret, contentType: value.contentType, session: sessionPath))
        case "SetSecret":
            let transported = try arguments.secret()
            try change(collection, id, secret: (try opened(transported, for: call.sender), transported.contentType))
        case "Delete":
            if collection == Self.session {
                guard memoryItems.removeValue(forKey: id) != nil else { throw .noSuchObject(call.path) }
            } else {
                try store.delete(id, in: collection)
                index?.items[id] = nil
            }
            signal(.item(collection: collection, id: id, .deleted))
            try reply.objectPath("/")
        default:
            throw .unknownMethod(Self.itemInterface, call.member)
        }
    }

    /// CreateItem. One attribute set in one collection is one item (decision 0268): a store of a
    /// set the collection holds changes that item, and folds into it any other item of the set (one
    /// stored before the rule, or on another machine meanwhile) but those that stand alone. A store
    /// that asks not to replace (`replacing` false) makes another item of a set the collection
    /// holds, named so that no fold takes it (decision 0303). The first item of a set is named
    /// after its collection and the set (``SecretStore/id(for:in:)``).
    func createItem(
        in collection: String, _ properties: [String: BusValue], secret: (value: [UInt8], contentType: String), replacing: Bool
    ) throws(BusError) -> String {
        try Self.checkSize(secret.value)
        guard case .stringMap(let attributes)? = properties[Self.itemInterface + ".Attributes"] ?? .stringMap([:]) else {
            throw .invalidArguments("Attributes must be a{ss}")
        }
        let label = try Self.label(in: properties, of: Self.itemInterface)
        let id = SecretStore.id(for: attributes, in: collection)
        // The item a replacing store changed, else the ID of another item of the set, if any.
        let stored = { () throws(BusError) -> (kept: String?, another: String?) in
            let same = try self.entries(in: collection).filter { $0.attributes == attributes }
            guard let kept = Self.keptItem(of: same, named: id) else { return (nil, nil) }
            guard replacing else { return (nil, SecretStore.anotherID(for: attributes, in: collection)) }
            try self.change(collection, kept.id, label: label, secret: secret)
            try self.fold(Self.folded(same, into: kept, in: collection), into: kept.id, in: collection)
            return (kept.id, nil)
        }
        let first = try stored()
        if let kept = first.kept { return kept }
        if collection == Self.session {
            let now = UInt64(Date().timeIntervalSince1970)
            let entry = SecretStore.Entry(
                id: first.another ?? (memoryItems[id] == nil ? id : SecretStore.newID()), collection: collection, label: label,
                attributes: attributes, contentType: secret.contentType, created: now, modified: now)
            memoryItems[entry.id] = (entry, secret.value)
            signal(.item(collection: collection, id: entry.id, .created))
            return entry.id
        }
        let add = { (id: String) throws(BusError) -> SecretStore.Entry? in
            try self.store.add(id, to: collection, label: label, attributes: attributes, secret: secret.value, contentType: secret.contentType)
        }
        if let entry = try add(first.another ?? id) { return created(entry) }
        // Another process wrote an item of the set since the index was read (sync brought it in):
        // a replacing store changes it, another store makes another item. Or an item whose
        // attributes were changed since it was stored has this ID: the new item takes a random one.
        let again = try stored()
        if let kept = again.kept { return kept }
        guard let entry = try add(again.another ?? SecretStore.newID()) else { throw .failed("an item with this ID exists") }
        return created(entry)
    }

    /// A new persisted item, in the index and signalled.
    private func created(_ entry: SecretStore.Entry) -> String {
        index?.add(entry)
        signal(.item(collection: entry.collection, id: entry.id, .created))
        return entry.id
    }

    static func checkSize(_ secret: [UInt8]) throws(BusError) {
        guard secret.count <= maximumSecretBytes else { throw .invalidArguments("the secret is larger than \(maximumSecretBytes) bytes") }
    }

    /// The secret `transported` carries, opened through `client`'s session: one too large is
    /// refused before anything else (an encrypted one pads at most one block), then one whose
    /// session is not `client`'s.
    func opened(_ transported: TransportSecret, for client: String) throws(BusError) -> [UInt8] {
        try Self.checkSize(Array(transported.value.dropLast(16)))
        let value = try transport(transported.session, for: client).decode(transported)
        try Self.checkSize(value)
        return value
    }

    func secret(_ collection: String, _ id: String) throws(BusError) -> (secret: [UInt8], contentType: String) {
        if collection == Self.session {
            guard let stored = memoryItems[id] else { throw .noSuchObject(Self.path(collection: collection, item: id)) }
            return (stored.secret, stored.entry.contentType)
        }
        return try store.secret(of: id, in: collection)
    }

    /// Changes an item's label, attributes and/or secret; the collection signals ItemChanged.
    func change(_ collection: String, _ id: String, label: String? = nil, attributes: [String: String]? = nil,
                secret: (value: [UInt8], contentType: String)? = nil) throws(BusError) {
        if collection == Self.session {
            guard var stored = memoryItems[id] else { throw .noSuchObject(Self.path(collection: collection, item: id)) }
            if let label { stored.entry.label = label }
            if let attributes { stored.entry.attributes = attributes }
            if let secret {
                stored.secret = secret.value
                stored.entry.contentType = secret.contentType
            }
            stored.entry.modified = UInt64(Date().timeIntervalSince1970)
            memoryItems[id] = stored
        } else {
            try store.update(id, in: collection, label: label, attributes: attributes, secret: secret)
            if index != nil { index?.items[id] = try store.entry(id, in: collection) }
        }
        signal(.item(collection: collection, id: id, .changed))
    }

    /// The Item interface's properties.
    func itemProperties(_ collection: String, _ id: String) throws(BusError) -> [(String, BusValue)] {
        let entry: SecretStore.Entry?
        if collection == Self.session {
            entry = memoryItems[id]?.entry
        } else {
            entry = try current().items[id].flatMap { $0.collection == collection ? $0 : nil }
        }
        guard let entry else { throw .noSuchObject(Self.path(collection: collection, item: id)) }
        return [
            ("Locked", .bool(collection != Self.session && store.isLocked)),
            ("Attributes", .stringMap(entry.attributes)),
            ("Label", .string(entry.label)),
            ("Type", .string(entry.attributes["xdg:schema"] ?? "")),
            ("Created", .uint64(entry.created)),
            ("Modified", .uint64(entry.modified)),
        ]
    }
}

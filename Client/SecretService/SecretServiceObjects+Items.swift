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
    /// set the collection holds changes that item (CreateItem's `replace` or not), and folds any other
    /// item of the same set into it (one stored before the rule, or on another machine meanwhile);
    /// a new item is named after its collection and attribute set (``SecretStore/id(for:in:)``).
    func createItem(
        in collection: String, _ properties: [String: BusValue], secret: (value: [UInt8], contentType: String)
    ) throws(BusError) -> String {
        try Self.checkSize(secret.value)
        guard case .stringMap(let attributes)? = properties[Self.itemInterface + ".Attributes"] ?? .stringMap([:]) else {
            throw .invalidArguments("Attributes must be a{ss}")
        }
        let label = try Self.label(in: properties, of: Self.itemInterface)
        let id = SecretStore.id(for: attributes, in: collection)
        if let kept = try storeOverSameAttributes(in: collection, id: id, label: label, attributes: attributes, secret: secret) {
            return kept
        }
        if collection == Self.session {
            let now = UInt64(Date().timeIntervalSince1970)
            let entry = SecretStore.Entry(
                id: memoryItems[id] == nil ? id : SecretStore.newID(), collection: collection, label: label, attributes: attributes,
                contentType: secret.contentType, created: now, modified: now)
            memoryItems[entry.id] = (entry, secret.value)
            signal(.item(collection: collection, id: entry.id, .created))
            return entry.id
        }
        let add = { (id: String) throws(BusError) -> SecretStore.Entry? in
            try self.store.add(id, to: collection, label: label, attributes: attributes, secret: secret.value, contentType: secret.contentType)
        }
        guard let entry = try add(id) else {
            // Another process wrote the item since the index was read (sync brought it in): the
            // store changes it. Or an item whose attributes were changed since it was stored has
            // this ID: the new item takes a random one.
            if let kept = try storeOverSameAttributes(in: collection, id: id, label: label, attributes: attributes, secret: secret) {
                return kept
            }
            guard let entry = try add(SecretStore.newID()) else { throw .failed("an item with this ID exists") }
            return created(entry)
        }
        return created(entry)
    }

    /// The store of an attribute set the collection holds: the item named after the set (else the
    /// newest of the set) takes the label and secret, and every other item of the set is folded
    /// into it. Nil when the collection holds no item of the set.
    private func storeOverSameAttributes(
        in collection: String, id: String, label: String, attributes: [String: String], secret: (value: [UInt8], contentType: String)
    ) throws(BusError) -> String? {
        let same = try entries(in: collection).filter { $0.attributes == attributes }
        guard let kept = Self.keptItem(of: same, named: id) else { return nil }
        try change(collection, kept.id, label: label, secret: secret)
        try fold(same, into: kept.id, in: collection)
        return kept.id
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

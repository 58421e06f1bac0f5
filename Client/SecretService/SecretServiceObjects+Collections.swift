/// The Collection interface, and the Service methods that create collections and name them
/// (decision 0141).
extension SecretServiceObjects {
    func collection(_ name: String, _ call: BusCall, reply: BusWriter) throws(BusError) {
        guard call.interface == Self.collectionInterface || call.interface.isEmpty else { throw .unknownMethod(call.interface, call.member) }
        let arguments = call.arguments
        switch call.member {
        case "SearchItems":
            let wanted = try arguments.stringMap()
            try reply.objectPaths(try search(wanted, in: name).map(Self.path(of:)))
        case "CreateItem":
            let properties = try arguments.properties()
            let transported = try arguments.secret()
            let replacing = try arguments.bool()
            let id = try createItem(
                in: name, properties, secret: (try opened(transported, for: call.sender), transported.contentType), replacing: replacing)
            try reply.objectPath(Self.path(collection: name, item: id))
            try reply.objectPath("/")
        case "Delete":
            guard name != SecretStore.login, name != Self.session else { throw .notSupported("the \(name) collection cannot be deleted") }
            guard !store.isGroup(name) else { throw .notSupported("a shared group's collection goes when the account leaves the group (sync-client group leave)") }
            _ = try current()
            try store.deleteCollection(name)
            try refresh()
            try reply.objectPath("/")
        default:
            throw .unknownMethod(Self.collectionInterface, call.member)
        }
    }

    /// The `Label` property of `interface` among `properties`; empty when not given.
    static func label(in properties: [String: BusValue], of interface: String) throws(BusError) -> String {
        guard let given = properties[interface + ".Label"] else { return "" }
        guard case .string(let text) = given else { throw .invalidArguments("Label must be a string") }
        return text
    }

    /// CreateCollection: the collection `alias` already names, else a new one (named after its
    /// label) that `alias` then names.
    func createCollection(_ properties: [String: BusValue], alias: String) throws(BusError) -> String {
        if !alias.isEmpty, let existing = collection(alias: alias) { return existing }
        let label = try Self.label(in: properties, of: Self.collectionInterface)
        guard alias.isEmpty || SecretStore.isPathElement(alias) else { throw .invalidArguments("an alias is letters, digits and _") }
        let index = try current()
        let name = SecretStore.newCollectionName(label: label, taken: Set(index.collections.keys))
        try store.createCollection(name, label: label)
        if !alias.isEmpty { try store.setAlias(alias, to: name) }
        try refresh()
        return name
    }

    /// SetAlias: `alias` names the collection at `path`, or no longer names one when `path` is `/`.
    func setAlias(_ alias: String, to path: String) throws(BusError) {
        guard SecretStore.isPathElement(alias) else { throw .invalidArguments("an alias is letters, digits and _") }
        guard alias != Self.session else { throw .notSupported("the session alias always names the session collection") }
        let index = try current()
        if path == "/" {
            try store.setAlias(alias, to: nil)
        } else {
            guard case .collection(let name) = try target(of: path), path.hasPrefix(Self.collectionPrefix) else {
                throw .invalidArguments("\(path) is not a collection")
            }
            guard name != Self.session else { throw .notSupported("an alias names a persisted collection, not the session one") }
            guard index.collection(named: alias) != name else { return }
            try store.setAlias(alias, to: name)
        }
        try refresh()
    }

    /// Sets a collection's label; the collection signals CollectionChanged.
    func setLabel(_ label: String, ofCollection name: String) throws(BusError) {
        if name == Self.session {
            sessionLabel = label
            signal(.collection(name, .changed))
            return
        }
        guard !store.isGroup(name) else { throw .notSupported("a shared group's collection is labelled with the account's name for the group") }
        _ = try current()
        try store.setLabel(label, of: name)
        try refresh()
    }

    /// The Collection interface's properties.
    func collectionProperties(_ name: String) -> [(String, BusValue)] {
        let items = (try? entries(in: name)) ?? []
        let record: CollectionIndex.Collection? =
            name == Self.session ? .init(label: sessionLabel, created: 0, modified: 0) : (try? current())?.collections[name]
        let created = [record?.created ?? 0, items.map(\.created).min() ?? 0].filter { $0 > 0 }.min() ?? 0
        return [
            ("Items", .objectPaths(items.map(Self.path(of:)))),
            ("Label", .string(record?.label ?? (name == SecretStore.login ? "Login" : name))),
            ("Locked", .bool(name != Self.session && store.isLocked)),
            ("Created", .uint64(created)),
            ("Modified", .uint64(max(record?.modified ?? 0, items.map(\.modified).max() ?? 0))),
        ]
    }
}

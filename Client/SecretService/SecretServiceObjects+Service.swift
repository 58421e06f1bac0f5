/// The Service interface: sessions, searches across collections, secrets, locking, collections
/// and aliases.
extension SecretServiceObjects {
    func service(_ call: BusCall, reply: BusWriter) throws(BusError) {
        guard call.interface == Self.serviceInterface || call.interface.isEmpty else { throw .unknownMethod(call.interface, call.member) }
        let arguments = call.arguments
        switch call.member {
        case "OpenSession":
            try openSession(arguments, for: call.sender, reply: reply)
        case "SearchItems":
            let wanted = try arguments.stringMap()
            let found = try search(wanted, in: nil)
            let locked = store.isLocked
            try reply.objectPaths(found.filter { !locked || $0.collection == Self.session }.map(Self.path(of:)))
            try reply.objectPaths(locked ? found.filter { $0.collection != Self.session }.map(Self.path(of:)) : [])
        case "GetSecrets":
            let paths = try arguments.objectPaths()
            let sessionPath = try arguments.objectPath()
            let session = try transport(sessionPath, for: call.sender)
            try reply.container("a", "{o(oayays)}") { () throws(BusError) in
                for path in paths {
                    guard case .item(let collection, let id) = try? target(of: path),
                        let value = try? secret(collection, id)
                    else { continue }
                    try reply.container("e", "o(oayays)") { () throws(BusError) in
                        try reply.objectPath(path)
                        try reply.secret(try session.encode(value.secret, contentType: value.contentType, session: sessionPath))
                    }
                }
            }
        case "Unlock":
            try unlock(try arguments.objectPaths(), reply: reply)
        case "Lock":
            let paths = try arguments.objectPaths()
            do { try store.keychain.lock() } catch { throw SecretStore.mapped(error) }
            try reply.objectPaths(paths)
            try reply.objectPath("/")
        case "ReadAlias":
            let name = try arguments.string()
            try reply.objectPath(collection(alias: name).map { Self.path(collection: $0) } ?? "/")
        case "SetAlias":
            try setAlias(try arguments.string(), to: try arguments.objectPath())
        case "CreateCollection":
            let properties = try arguments.properties()
            let alias = try arguments.string()
            try reply.objectPath(Self.path(collection: try createCollection(properties, alias: alias)))
            try reply.objectPath("/")
        default:
            throw .unknownMethod(Self.serviceInterface, call.member)
        }
    }
}

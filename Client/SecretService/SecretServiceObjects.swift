import Foundation
import Synchronization

/// The freedesktop Secret Service API 0.2 on `/org/freedesktop/secrets` (decision 0140): the
/// Service, its collections (`login`, synchronizable and named by the `default` alias; `session`,
/// in memory), their items, sessions, and the Properties and Introspectable interfaces. Runs on
/// the bus thread only.
final class SecretServiceObjects: BusCallHandler, @unchecked Sendable {
    static let root = "/org/freedesktop/secrets"
    static let collectionPrefix = root + "/collection/"
    static let serviceInterface = "org.freedesktop.Secret.Service"
    static let collectionInterface = "org.freedesktop.Secret.Collection"
    static let itemInterface = "org.freedesktop.Secret.Item"
    static let sessionInterface = "org.freedesktop.Secret.Session"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"
    static let introspectableInterface = "org.freedesktop.DBus.Introspectable"
    /// The largest secret taken (the keychain's item limit is larger; a desktop secret is small).
    static let maximumSecretBytes = 64 * 1024

    let store: SecretStore
    /// Emits signals; set by the runner once the bus is up.
    var connection: BusConnection?
    private var sessions: [String: TransportSession] = [:]
    private var sessionCount = 0
    /// The `session` collection: in this process's memory only, never synced.
    private var memoryItems: [String: (entry: SecretStore.Entry, secret: [UInt8])] = [:]
    /// What the service last read of `login` (attributes, labels, dates; never secrets): searches
    /// run over it, and a change found against it is signalled. Kept only while a watcher tells
    /// the service of other processes' writes (``keychainChanged()``); otherwise read again on
    /// every call.
    private var index: [String: SecretStore.Entry]?
    /// The keychain's external change counter when `index` was read.
    private var indexVersion: Int64 = -1
    /// Set once a ``KeychainWatcher`` runs.
    var keepsIndex = false

    init(store: SecretStore) { self.store = store }

    // MARK: Dispatch

    func handle(_ call: BusCall, reply: BusWriter) throws(BusError) {
        switch call.interface {
        case Self.propertiesInterface: try properties(call, reply: reply)
        case Self.introspectableInterface where call.member == "Introspect": try reply.string(introspection(of: call.path))
        default:
            switch try target(of: call.path) {
            case .service: try service(call, reply: reply)
            case .collection(let name): try collection(name, call, reply: reply)
            case .item(let collection, let id): try item(collection, id, call, reply: reply)
            case .session(let path): try session(path, call, reply: reply)
            }
        }
    }

    enum Target: Equatable {
        case service
        case collection(String)
        case item(collection: String, id: String)
        case session(String)
    }

    func target(of path: String) throws(BusError) -> Target {
        if path == Self.root { return .service }
        if path == Self.root + "/aliases/default" { return .collection(SecretStore.login) }
        if path.hasPrefix(Self.root + "/session/"), sessions[path] != nil { return .session(path) }
        if path.hasPrefix(Self.collectionPrefix) {
            let parts = path.dropFirst(Self.collectionPrefix.count).split(separator: "/", omittingEmptySubsequences: false)
            guard let name = parts.first.map(String.init), Self.collections.contains(name) else { throw .noSuchObject(path) }
            if parts.count == 1 { return .collection(name) }
            if parts.count == 2, !parts[1].isEmpty { return .item(collection: name, id: String(parts[1])) }
        }
        throw .noSuchObject(path)
    }

    static let collections = [SecretStore.login, "session"]
    static func path(collection: String) -> String { collectionPrefix + collection }
    static func path(collection: String, item: String) -> String { collectionPrefix + collection + "/" + item }

    // MARK: Service

    private func service(_ call: BusCall, reply: BusWriter) throws(BusError) {
        guard call.interface == Self.serviceInterface || call.interface.isEmpty else { throw .unknownMethod(call.interface, call.member) }
        let arguments = call.arguments
        switch call.member {
        case "OpenSession":
            let algorithm = try arguments.string()
            let input = try arguments.variant()
            let session = try TransportSession.open(algorithm: algorithm, input: input)
            sessionCount += 1
            let path = "\(Self.root)/session/s\(sessionCount)"
            sessions[path] = session
            try reply.variant(session.output)
            try reply.objectPath(path)
        case "SearchItems":
            let wanted = try arguments.stringMap()
            let found = try search(wanted, in: Self.collections)
            let locked = store.isLocked
            try reply.objectPaths(found.filter { !locked || $0.collection == "session" }.map(Self.path(of:)))
            try reply.objectPaths(locked ? found.filter { $0.collection != "session" }.map(Self.path(of:)) : [])
        case "GetSecrets":
            let paths = try arguments.objectPaths()
            let sessionPath = try arguments.objectPath()
            let session = try transport(sessionPath)
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
            let paths = try arguments.objectPaths()
            if store.isLocked {
                do {
                    try store.keychain.unlock(passcode: nil)
                } catch {
                    // A passcode protects the keychain: a headless service has nobody to ask.
                    throw BusError(name: "org.freedesktop.Secret.Error.IsLocked",
                                   message: "the keychain has a passcode: unlock it with `keychain unlock`")
                }
            }
            try reply.objectPaths(paths)
            try reply.objectPath("/")
        case "Lock":
            let paths = try arguments.objectPaths()
            do { try store.keychain.lock() } catch { throw SecretStore.mapped(error) }
            try reply.objectPaths(paths)
            try reply.objectPath("/")
        case "ReadAlias":
            let name = try arguments.string()
            switch name {
            case "default", SecretStore.login: try reply.objectPath(Self.path(collection: SecretStore.login))
            case "session": try reply.objectPath(Self.path(collection: "session"))
            default: try reply.objectPath("/")
            }
        case "SetAlias":
            let name = try arguments.string()
            let path = try arguments.objectPath()
            guard name == "default", path == Self.path(collection: SecretStore.login) else {
                throw .notSupported("only the default alias, naming the login collection, is kept")
            }
        case "CreateCollection":
            _ = try arguments.properties()
            let alias = try arguments.string()
            // The collections are fixed: `login` (synced) and `session` (memory). A request for the
            // default collection gets login; others are refused with a clear error.
            guard alias == "default" || alias == SecretStore.login else {
                throw .notSupported("new collections are not supported; use the default (login) or session collection")
            }
            try reply.objectPath(Self.path(collection: SecretStore.login))
            try reply.objectPath("/")
        default:
            throw .unknownMethod(Self.serviceInterface, call.member)
        }
    }

    // MARK: Collection

    private func collection(_ name: String, _ call: BusCall, reply: BusWriter) throws(BusError) {
        guard call.interface == Self.collectionInterface || call.interface.isEmpty else { throw .unknownMethod(call.interface, call.member) }
        let arguments = call.arguments
        switch call.member {
        case "SearchItems":
            let wanted = try arguments.stringMap()
            try reply.objectPaths(try search(wanted, in: [name]).map(Self.path(of:)))
        case "CreateItem":
            let properties = try arguments.properties()
            let transported = try arguments.secret()
            let replace = try arguments.bool()
            let session = try transport(transported.session)
            let value = try session.decode(transported)
            guard value.count <= Self.maximumSecretBytes else {
                throw .invalidArguments("the secret is larger than \(Self.maximumSecretBytes) bytes")
            }
            guard case .stringMap(let attributes)? = properties[Self.itemInterface + ".Attributes"] ?? .stringMap([:]) else {
                throw .invalidArguments("Attributes must be a{ss}")
            }
            var label = ""
            if let given = properties[Self.itemInterface + ".Label"] {
                guard case .string(let text) = given else { throw .invalidArguments("Label must be a string") }
                label = text
            }
            let existing = replace ? try entries(in: name).first { $0.attributes == attributes } : nil
            let id: String
            if let existing {
                try change(name, existing.id, label: label, attributes: attributes, secret: (value, transported.contentType))
                id = existing.id
            } else {
                id = try add(name, label: label, attributes: attributes, secret: value, contentType: transported.contentType)
            }
            try reply.objectPath(Self.path(collection: name, item: id))
            try reply.objectPath("/")
        case "Delete":
            throw .notSupported("the \(name) collection cannot be deleted")
        default:
            throw .unknownMethod(Self.collectionInterface, call.member)
        }
    }

    // MARK: Item

    private func item(_ collection: String, _ id: String, _ call: BusCall, reply: BusWriter) throws(BusError) {
        guard call.interface == Self.itemInterface || call.interface.isEmpty else { throw .unknownMethod(call.interface, call.member) }
        let arguments = call.arguments
        switch call.member {
        case "GetSecret":
            let sessionPath = try arguments.objectPath()
            let session = try transport(sessionPath)
            let value = try secret(collection, id)
            try reply.secret(try session.encode(value.secret, contentType: value.contentType, session: sessionPath))
        case "SetSecret":
            let transported = try arguments.secret()
            let value = try transport(transported.session).decode(transported)
            guard value.count <= Self.maximumSecretBytes else {
                throw .invalidArguments("the secret is larger than \(Self.maximumSecretBytes) bytes")
            }
            try change(collection, id, secret: (value, transported.contentType))
        case "Delete":
            if collection == "session" {
                guard memoryItems.removeValue(forKey: id) != nil else { throw .noSuchObject(call.path) }
                emit(collection, "ItemDeleted", item: id)
            } else {
                try store.delete(id, in: collection)
                wrote(id, now: nil, "ItemDeleted")
            }
            try reply.objectPath("/")
        default:
            throw .unknownMethod(Self.itemInterface, call.member)
        }
    }

    // MARK: Session

    private func session(_ path: String, _ call: BusCall, reply: BusWriter) throws(BusError) {
        guard call.member == "Close" else { throw .unknownMethod(Self.sessionInterface, call.member) }
        sessions[path] = nil
    }

    private func transport(_ path: String) throws(BusError) -> TransportSession {
        guard let session = sessions[path] else { throw .noSession(path) }
        return session
    }

    // MARK: Properties

    private func properties(_ call: BusCall, reply: BusWriter) throws(BusError) {
        let target = try target(of: call.path)
        let arguments = call.arguments
        switch call.member {
        case "Get":
            let interface = try arguments.string()
            let name = try arguments.string()
            guard let value = try properties(of: target, interface: interface).first(where: { $0.0 == name })?.1 else {
                throw .invalidArguments("no property \(name) in \(interface)")
            }
            try reply.variant(value)
        case "GetAll":
            let interface = try arguments.string()
            try reply.properties(try properties(of: target, interface: interface))
        case "Set":
            let interface = try arguments.string()
            let name = try arguments.string()
            let value = try arguments.variant()
            guard case .item(let collection, let id) = target, interface == Self.itemInterface else {
                throw .invalidArguments("\(name) cannot be set here")
            }
            switch (name, value) {
            case ("Label", .string(let label)): try change(collection, id, label: label)
            case ("Attributes", .stringMap(let attributes)): try change(collection, id, attributes: attributes)
            default: throw .invalidArguments("\(name) cannot be set to a \(value.signature)")
            }
        default:
            throw .unknownMethod(Self.propertiesInterface, call.member)
        }
    }

    private func properties(of target: Target, interface: String) throws(BusError) -> [(String, BusValue)] {
        switch target {
        case .service where interface == Self.serviceInterface:
            return [("Collections", .objectPaths(Self.collections.map { Self.path(collection: $0) }))]
        case .collection(let name) where interface == Self.collectionInterface:
            let items = (try? entries(in: name)) ?? []
            return [
                ("Items", .objectPaths(items.map(Self.path(of:)))),
                ("Label", .string(name == SecretStore.login ? "Login" : "Session")),
                ("Locked", .bool(name != "session" && store.isLocked)),
                ("Created", .uint64(items.map(\.created).min() ?? 0)),
                ("Modified", .uint64(items.map(\.modified).max() ?? 0)),
            ]
        case .item(let collection, let id) where interface == Self.itemInterface:
            guard let entry = try entries(in: collection).first(where: { $0.id == id }) else {
                throw .noSuchObject(Self.path(collection: collection, item: id))
            }
            return [
                ("Locked", .bool(collection != "session" && store.isLocked)),
                ("Attributes", .stringMap(entry.attributes)),
                ("Label", .string(entry.label)),
                ("Type", .string(entry.attributes["xdg:schema"] ?? "")),
                ("Created", .uint64(entry.created)),
                ("Modified", .uint64(entry.modified)),
            ]
        case .session:
            return []
        default:
            throw .invalidArguments("no interface \(interface) here")
        }
    }

    // MARK: Items in either kind of collection

    private func entries(in collection: String) throws(BusError) -> [SecretStore.Entry] {
        if collection == "session" { return memoryItems.values.map(\.entry) }
        let version = externalVersion()
        // The index stands while no other process committed since it was read (this service's own
        // writes keep it current themselves); without a watcher it is read again on every call.
        if keepsIndex, let index, version == indexVersion { return Array(index.values) }
        do {
            try reload(version: version)
        } catch where error == .isLocked {
            // Locked: what was read before is still listed (as locked items); secrets stay shut.
            guard index != nil else { throw error }
        }
        return Array((index ?? [:]).values)
    }

    /// Another process may have written (the watcher saw the keychain's files change, e.g.
    /// `sync-client run` applying another device's change): reads `login` again if so, and
    /// signals what changed.
    func keychainChanged() {
        let version = externalVersion()
        guard version != indexVersion else { return }
        try? reload(version: version)
    }

    /// Reads `login` again; when it had been read before, signals what changed since.
    private func reload(version: Int64) throws(BusError) {
        let fresh = try store.entries(in: SecretStore.login)
        let new = Dictionary(fresh.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        if let old = index {
            for (id, entry) in new.sorted(by: { $0.key < $1.key }) where old[id] != entry {
                emit(SecretStore.login, old[id] == nil ? "ItemCreated" : "ItemChanged", item: id)
            }
            for id in old.keys.sorted() where new[id] == nil { emit(SecretStore.login, "ItemDeleted", item: id) }
        }
        index = new
        indexVersion = version
    }

    /// This service wrote item `id` of `login` (`entry`: what it is now, nil once deleted): the
    /// index follows and the signal goes out, without reading the collection again.
    private func wrote(_ id: String, now entry: SecretStore.Entry?, _ member: String) {
        if index != nil { index?[id] = entry }
        emit(SecretStore.login, member, item: id)
    }

    private func externalVersion() -> Int64 { (try? store.keychain.externalChangeCounter()) ?? -1 }

    private func search(_ wanted: [String: String], in collections: [String]) throws(BusError) -> [SecretStore.Entry] {
        var found: [SecretStore.Entry] = []
        for collection in collections {
            let entries: [SecretStore.Entry]
            do {
                entries = try self.entries(in: collection)
            } catch where error == .isLocked {
                continue
            }
            found += entries.filter { entry in wanted.allSatisfy { entry.attributes[$0.key] == $0.value } }
        }
        return found.sorted { $0.created == $1.created ? $0.id < $1.id : $0.created > $1.created }
    }

    private func secret(_ collection: String, _ id: String) throws(BusError) -> (secret: [UInt8], contentType: String) {
        if collection == "session" {
            guard let stored = memoryItems[id] else { throw .noSuchObject(Self.path(collection: collection, item: id)) }
            return (stored.secret, stored.entry.contentType)
        }
        return try store.secret(of: id, in: collection)
    }

    private func add(_ collection: String, label: String, attributes: [String: String], secret: [UInt8], contentType: String) throws(BusError) -> String {
        if collection == "session" {
            let now = UInt64(Date().timeIntervalSince1970)
            let entry = SecretStore.Entry(
                id: SecretStore.newID(), collection: collection, label: label, attributes: attributes, contentType: contentType,
                created: now, modified: now)
            memoryItems[entry.id] = (entry, secret)
            emit(collection, "ItemCreated", item: entry.id)
            return entry.id
        }
        let entry = try store.add(to: collection, label: label, attributes: attributes, secret: secret, contentType: contentType)
        wrote(entry.id, now: entry, "ItemCreated")
        return entry.id
    }

    private func change(_ collection: String, _ id: String, label: String? = nil, attributes: [String: String]? = nil,
                        secret: (value: [UInt8], contentType: String)? = nil) throws(BusError) {
        if collection == "session" {
            guard var stored = memoryItems[id] else { throw .noSuchObject(Self.path(collection: collection, item: id)) }
            if let label { stored.entry.label = label }
            if let attributes { stored.entry.attributes = attributes }
            if let secret {
                stored.secret = secret.value
                stored.entry.contentType = secret.contentType
            }
            stored.entry.modified = UInt64(Date().timeIntervalSince1970)
            memoryItems[id] = stored
            emit(collection, "ItemChanged", item: id)
            return
        }
        try store.update(id, in: collection, label: label, attributes: attributes, secret: secret)
        wrote(id, now: try store.entry(id, in: collection), "ItemChanged")
    }

    static func path(of entry: SecretStore.Entry) -> String { path(collection: entry.collection, item: entry.id) }

    private func emit(_ collection: String, _ member: String, item id: String) {
        connection?.emit(path: Self.path(collection: collection), interface: Self.collectionInterface, member: member) { writer throws(BusError) in
            try writer.objectPath(Self.path(collection: collection, item: id))
        }
    }

    // MARK: Introspection

    private func introspection(of path: String) throws(BusError) -> String {
        let interfaces: [String]
        var children: [String] = []
        switch try? target(of: path) {
        case .service?:
            interfaces = [Self.serviceInterface]
            children = ["collection", "aliases", "session"]
        case .collection(let name)?:
            interfaces = [Self.collectionInterface]
            children = ((try? entries(in: name)) ?? []).map(\.id)
        case .item?: interfaces = [Self.itemInterface]
        case .session?: interfaces = [Self.sessionInterface]
        case nil:
            interfaces = []
            if path == Self.root + "/collection" { children = Self.collections }
            if path == Self.root + "/aliases" { children = ["default"] }
        }
        var xml = "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\" "
            + "\"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">\n<node>\n"
        for interface in [Self.introspectableInterface, Self.propertiesInterface] + interfaces {
            xml += "  <interface name=\"\(interface)\"/>\n"
        }
        for child in children { xml += "  <node name=\"\(child)\"/>\n" }
        return xml + "</node>\n"
    }
}

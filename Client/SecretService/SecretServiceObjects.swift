import Foundation
import Synchronization

/// The freedesktop Secret Service API 0.2 on `/org/freedesktop/secrets` (decisions 0140, 0141):
/// the Service, its collections (`login`, named by the `default` alias, and those clients create,
/// all persisted and synchronizable; `session`, in memory), their items, sessions, unlock
/// prompts, and the Properties and Introspectable interfaces. Runs on the bus thread only.
final class SecretServiceObjects: BusCallHandler, @unchecked Sendable {
    static let root = "/org/freedesktop/secrets"
    static let collectionPrefix = root + "/collection/"
    static let aliasPrefix = root + "/aliases/"
    static let promptPrefix = root + "/prompt/"
    static let serviceInterface = "org.freedesktop.Secret.Service"
    static let collectionInterface = "org.freedesktop.Secret.Collection"
    static let itemInterface = "org.freedesktop.Secret.Item"
    static let sessionInterface = "org.freedesktop.Secret.Session"
    static let promptInterface = "org.freedesktop.Secret.Prompt"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"
    static let introspectableInterface = "org.freedesktop.DBus.Introspectable"
    /// The collection kept in this process's memory only.
    static let session = "session"
    /// The largest secret taken (the keychain's item limit is larger; a desktop secret is small).
    static let maximumSecretBytes = 64 * 1024

    let store: SecretStore
    /// Emits signals; set by the runner once the bus is up.
    var connection: BusConnection?
    /// Open sessions by path, each with the unique bus name of the client that opened it: only
    /// that client may use or close it, and it goes when the client leaves the bus.
    var sessions: [String: (transport: TransportSession, owner: String)] = [:]
    private var sessionCount = 0
    /// Unlock prompts not yet completed, by path.
    var prompts: [String: UnlockPrompt] = [:]
    var promptCount = 0
    /// The `session` collection: in this process's memory only, never synced.
    var memoryItems: [String: (entry: SecretStore.Entry, secret: [UInt8])] = [:]
    var sessionLabel = "Session"
    /// What the service last read of its persisted collections (never secrets): searches run
    /// over it, and a change found against it is signalled. Kept only while a watcher tells the
    /// service of other processes' writes (``keychainChanged()``); otherwise read again on every
    /// call.
    var index: CollectionIndex?
    /// The keychain's external change counter when `index` was read.
    var indexVersion: Int64 = -1
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
            case .prompt(let path): try prompt(path, call, reply: reply)
            }
        }
    }

    enum Target: Equatable {
        case service
        case collection(String)
        case item(collection: String, id: String)
        case session(String)
        case prompt(String)
    }

    func target(of path: String) throws(BusError) -> Target {
        if path == Self.root { return .service }
        if path.hasPrefix(Self.aliasPrefix), let name = collection(alias: String(path.dropFirst(Self.aliasPrefix.count))) {
            return .collection(name)
        }
        if path.hasPrefix(Self.root + "/session/"), sessions[path] != nil { return .session(path) }
        if path.hasPrefix(Self.promptPrefix), prompts[path] != nil { return .prompt(path) }
        if path.hasPrefix(Self.collectionPrefix) {
            let parts = path.dropFirst(Self.collectionPrefix.count).split(separator: "/", omittingEmptySubsequences: false)
            let index = try? current()
            let persisted = (index ?? CollectionIndex()).collections.keys
            guard let name = parts.first.map(String.init), name == Self.session || name == SecretStore.login || persisted.contains(name)
            else { throw .noSuchObject(path) }
            if parts.count == 1 { return .collection(name) }
            if parts.count == 2, !parts[1].isEmpty {
                let id = String(parts[1])
                // Only an item of that collection: a collection's own record (its label and
                // dates) is not an item. Unread while locked: the call that follows says so.
                if name != Self.session, let index, index.items[id]?.collection != name { throw .noSuchObject(path) }
                return .item(collection: name, id: id)
            }
        }
        throw .noSuchObject(path)
    }

    /// Every collection: `login` first, the others by name, `session` last. While the keychain is
    /// locked and was never read, `login` stands for the persisted ones.
    func collectionNames() -> [String] {
        let persisted = ((try? current()) ?? CollectionIndex()).collections.keys
        return [SecretStore.login] + persisted.filter { $0 != SecretStore.login }.sorted() + [Self.session]
    }

    /// The collection `alias` names, if any.
    func collection(alias: String) -> String? {
        if alias == Self.session { return Self.session }
        return ((try? current()) ?? CollectionIndex()).collection(named: alias)
    }

    static func path(collection: String) -> String { collectionPrefix + collection }
    static func path(collection: String, item: String) -> String { collectionPrefix + collection + "/" + item }
    static func path(of entry: SecretStore.Entry) -> String { path(collection: entry.collection, item: entry.id) }

    // MARK: Session

    func openSession(_ arguments: BusReader, for client: String, reply: BusWriter) throws(BusError) {
        let algorithm = try arguments.string()
        let input = try arguments.variant()
        let session = try TransportSession.open(algorithm: algorithm, input: input)
        sessionCount += 1
        let path = "\(Self.root)/session/s\(sessionCount)"
        sessions[path] = (session, client)
        try reply.variant(session.output)
        try reply.objectPath(path)
    }

    private func session(_ path: String, _ call: BusCall, reply: BusWriter) throws(BusError) {
        guard call.member == "Close" else { throw .unknownMethod(Self.sessionInterface, call.member) }
        _ = try transport(path, for: call.sender)
        sessions[path] = nil
    }

    /// The session at `path`, for `client`: another client's session is no session to it (its
    /// keys are that client's), so it can neither read secrets through it nor close it.
    func transport(_ path: String, for client: String) throws(BusError) -> TransportSession {
        guard let session = sessions[path], session.owner == client else { throw .noSession(path) }
        return session.transport
    }

    /// A client left the bus: its sessions go with it.
    func clientLeft(_ client: String) {
        sessions = sessions.filter { $0.value.owner != client }
    }
}

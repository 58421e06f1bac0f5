import Foundation
import KeychainCrypto
import KeyValueStore
import SyncCore

/// A shared group's values (decision 0292): one key-value store per group, in a database file of
/// its own beside the keychain, synced as one of the group's zones (``Groups``' zones).
package struct GroupValues: Sendable {
    let groups: Groups
    var session: ClientSession { groups.session }

    package init(groups: Groups) {
        self.groups = groups
    }

    /// The name of the one store a group's database holds.
    static let storeName = "shared"

    /// The zone of `group`'s values, on the server and in this device's state: named by the
    /// group, so it is no zone of the account's.
    static func zone(of group: [UInt8]) -> ZoneID { ZoneID("g." + group.hexString) }

    /// The group's store on this device, as it is (its database created on first use).
    package func store(of group: Groups.Group) throws(SyncClientError) -> KeyValueStore {
        try SyncClientError.mapping { () throws -> KeyValueStore in
            let database = try OpenFiles.keyValueDatabases.value(at: SharedGroupDirectory.valuesPath(of: group.log.group, besideKeychainAt: session.keychain.path), opening: { try KeyValueDatabase(path: $0) })
            _ = try database.bind(toDevice: session.enrolment.device)
            return try database.store(named: Self.storeName)
        }
    }

    /// The group's store, brought in step with the server first: what every member's devices
    /// wrote and the log admits, and this device's writes pushed, `write` first among them.
    /// - Throws: `invalidInput` when the account is no longer a member or does not hold the
    ///   group's key (nothing is then written); the driver's errors (a refused writer is a
    ///   problem the sync reports).
    @discardableResult
    package func synced(_ group: Groups.Group, writing write: ((KeyValueStore) throws -> Void)? = nil) async throws -> KeyValueStore {
        try await synced(group, as: try groups.access(group), writing: write)
    }

    /// ``synced(_:writing:)`` with this account's access to the group worked out already.
    func synced(_ group: Groups.Group, as access: Groups.Access, writing write: ((KeyValueStore) throws -> Void)? = nil) async throws -> KeyValueStore {
        let (identity, keys) = access
        let store = try store(of: group)
        if let write { try SyncClientError.mapping { try write(store) } }
        let zone = groups.zone(Self.zone(of: group.log.group), of: group, keys: keys)
        let local = try SyncClientError.mapping { try KeyValueZone(store: store, keys: keys) }
        _ = try await groups.driver(of: zone, in: group, signedBy: identity, keys: keys, local: local).syncUntilInStep()
        return store
    }

    /// Sets `text` under `key` in the group's store, then syncs the group; nothing is written
    /// when the account is no longer a member, or only reads the group (a viewer).
    package func set(_ text: String, forKey key: String, in group: Groups.Group) async throws {
        guard group.log.members[session.enrolment.account]?.role != .viewer else {
            throw SyncClientError(.invalidInput, "this account is a viewer of the group: it reads the group's values but may not change them")
        }
        try await synced(group) { try $0.set(text, forKey: key) }
    }

    /// The text under `key`, once the group is in step (or, not `syncing`, as this device holds
    /// it); nil when there is none.
    package func text(forKey key: String, in group: Groups.Group, syncing: Bool = true) async throws -> String? {
        let store = syncing ? try await synced(group) : try store(of: group)
        return try SyncClientError.mapping { try store.string(forKey: key) }
    }

    /// The keys of the group's values, once the group is in step, in ascending order.
    package func keys(in group: Groups.Group) async throws -> [String] {
        let store = try await synced(group)
        return try SyncClientError.mapping { try store.dictionaryRepresentation().keys.sorted() }
    }
}

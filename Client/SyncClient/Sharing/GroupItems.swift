import KeychainCrypto
import KeychainStore
import KeyValueStore
import SyncCore

/// A shared group's items (decision 0295): a keychain of their own beside the account's
/// (`keychain.group-<id>.db`, every item in it synchronizable, locked with the account's, 0298), which `keychain --group NAME`
/// reads and writes, synced as one of the group's zones (``Groups``' zones) by the keychain's own
/// local side, ``KeychainZone``.
package struct GroupItems: Sendable {
    let groups: Groups
    var session: ClientSession { groups.session }

    package init(groups: Groups) {
        self.groups = groups
    }

    /// The zone of `group`'s items, on the server and in this device's state.
    package static func zone(of group: [UInt8]) -> ZoneID { ZoneID("g." + group.hexString + ".items") }

    /// The group's keychain on this device (created on first use), the one this process has open
    /// if it has.
    package func keychain(of group: Groups.Group) throws(SyncClientError) -> Keychain {
        let path = SharedGroupDirectory.keychainPath(of: group.log.group, besideKeychainAt: session.keychain.path)
        return try SyncClientError.mapping { () throws -> Keychain in
            try OpenFiles.keychains.value(at: path) { path in
                var configuration = Keychain.Configuration(logger: session.logger)
                configuration.everyItemSynchronizable = true
                return try session.keychain.openSubordinate(at: path, name: group.log.group, configuration: configuration)
            }
        }
    }

    /// Brings the group's items in step with the server: what every member's devices wrote and
    /// the log admits applied here, and this device's changes pushed.
    /// - Throws: `invalidInput` when the account is no longer a member or does not hold the
    ///   group's key; the driver's errors (a refused writer is a problem the sync reports).
    @discardableResult
    package func synced(_ group: Groups.Group) async throws -> SyncRoundReport {
        try await synced(group, as: try groups.access(group))
    }

    /// ``synced(_:)`` with this account's access to the group worked out already.
    func synced(_ group: Groups.Group, as access: Groups.Access) async throws -> SyncRoundReport {
        let (identity, keys) = access
        let zone = groups.zone(Self.zone(of: group.log.group), of: group, keys: keys)
        let local = KeychainZone(keychain: try keychain(of: group), sealer: zone.sealer, device: session.enrolment.device)
        return try await groups.driver(of: zone, in: group, signedBy: identity, keys: keys, local: local).syncUntilInStep()
    }
}

import Crypto
import Foundation
import SyncCore

/// How a shared group's zones are stored (decision 0290): under a hidden account of the group's
/// own, so that the feed, `BatchMerge`, acknowledgements, horizons and collection serve a group's
/// zone exactly as an account's. A member account's device reads and writes there as a device row
/// of the hidden account with its own device ID (its version-vector entry), named by the member
/// account it belongs to; the row goes when that account stops being a current member or the
/// device is revoked, so it no longer holds the zone's tombstones back.
///
/// Nobody signs in to a hidden account: its name starts with a control character, which no
/// account name may hold (`Validation.accountName`), its sign-in material is empty, and its device
/// rows' token hashes are 33 bytes long, which no SHA-256 of a token is.
package enum GroupZones {
    private static let namePrefix = "\u{1F}group "

    /// The name of `group`'s hidden account.
    package static func accountName(of group: String) -> String { namePrefix + group }

    /// The group whose hidden account is called `name`, or nil for an account of people.
    package static func group(ofAccountNamed name: String) -> String? {
        name.hasPrefix(namePrefix) ? String(name.dropFirst(namePrefix.count)) : nil
    }

    /// A token hash no token has, unique per row: a marker byte and a digest of the row's key.
    static func unmatchableTokenHash(account: AccountID, device: DeviceID) -> [UInt8] {
        [0] + Array(SHA256.hash(data: Array("\(account)/\(device)".utf8)))
    }
}

extension ServerStorage {
    /// The account under which `device` of `account` reads and writes `group`'s zones: the group's
    /// hidden account, created on first use, where the device gets a row on its first request;
    /// and whether `account` only reads the group (a viewer). Throws `notFound` when `account` is
    /// not a current member of the group (as for a group that does not exist), and `deviceIDTaken`
    /// when a device of another member account uses the same ID there (their version-vector
    /// entries would be one).
    package func groupZoneAccount(
        of group: String, for device: DeviceID, of account: AccountID, now: Date
    ) async throws -> (account: AccountID, isViewer: Bool) {
        guard let membership = try await groups(of: account).first(where: { $0.group == group }) else {
            throw SyncServerError(.notFound, "no such group")
        }
        let zoneAccount = try await hiddenAccount(of: group, now: now)
        if let row = try await devices(of: zoneAccount).first(where: { $0.id == device }) {
            guard row.name == account.description else {
                throw SyncServerError(.deviceIDTaken, "a device of another member account uses this device ID in the group")
            }
        } else {
            _ = try await registerDevice(
                NewDevice(
                    account: zoneAccount, id: device, name: account.description,
                    tokenHash: GroupZones.unmatchableTokenHash(account: zoneAccount, device: device)),
                maximumDevices: .max, now: now)
        }
        return (zoneAccount, membership.isViewer)
    }

    /// Forgets the rows in `group`'s hidden account of devices whose account is no longer a
    /// current member, or that their account revoked: after a membership change or a revocation.
    package func forgetGroupZoneDevicesNoLongerMembers(of group: String) async throws {
        guard let zoneAccount = try await account(named: GroupZones.accountName(of: group))?.id else { return }
        let members = try await self.members(of: group)
        // Each owner's active devices, read once however many rows it has.
        var activeDevices: [AccountID: Set<DeviceID>] = [:]
        for row in try await devices(of: zoneAccount) {
            guard let owner = AccountID(row.name) else { continue }
            if activeDevices[owner] == nil, members.contains(owner) {
                activeDevices[owner] = Set(try await devices(of: owner).filter(\.isActive).map(\.id))
            }
            if activeDevices[owner]?.contains(row.id) != true { try await forgetDevice(row.id, of: zoneAccount) }
        }
    }

    private func hiddenAccount(of group: String, now: Date) async throws -> AccountID {
        let name = GroupZones.accountName(of: group)
        if let existing = try await account(named: name) { return existing.id }
        let empty = AccountCredentials(verifier: [], kdfParameters: [], salt: [], wrappedAccountKey: [], wrappedRecoveryKey: nil)
        do {
            try await createAccount(NewAccount(name: name, credentials: empty), now: now)
        } catch let error as SyncServerError where error.code == .accountExists {
            // Another request created it first: the name is unique, so there is one.
        }
        guard let created = try await account(named: name) else { throw SyncServerError(.storageFailure, "a group's zone account went missing") }
        return created.id
    }
}

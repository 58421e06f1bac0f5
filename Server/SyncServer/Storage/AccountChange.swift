import SyncCore

/// A committed change of an account, as the push hub hears of it: an upload, a revocation, or the
/// operator disabling the account.
package struct AccountChange: Sendable, Equatable, Codable {
    package var account: AccountID
    package var zone: ZoneID
    /// The account's latest sequence number after the upload.
    package var sequence: UInt64
    /// For a revocation, the revoked device, whose push connections every server process closes
    /// (`zone` is then empty and `sequence` 0); nil for an upload.
    package var revokedDevice: DeviceID?
    /// Whether the operator disabled the account: every process closes all its push connections.
    package var disablesAccount = false

    package init(account: AccountID, zone: ZoneID, sequence: UInt64) {
        self.account = account
        self.zone = zone
        self.sequence = sequence
    }

    /// The change that tells every server process that `device` was revoked.
    package static func revocation(of device: DeviceID, in account: AccountID) -> AccountChange {
        var change = AccountChange(account: account, zone: ZoneID(""), sequence: 0)
        change.revokedDevice = device
        return change
    }

    /// The change that tells every server process that the operator disabled `account`.
    package static func disabling(_ account: AccountID) -> AccountChange {
        var change = AccountChange(account: account, zone: ZoneID(""), sequence: 0)
        change.disablesAccount = true
        return change
    }
}

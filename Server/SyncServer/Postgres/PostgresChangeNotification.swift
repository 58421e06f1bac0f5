import Foundation
import SyncCore

/// The NOTIFY payload that tells every server process on one database that an account changed:
/// `ACCOUNT-UUID SEQUENCE ZONE` for an upload, `ACCOUNT-UUID revoked DEVICE` for a revocation,
/// `ACCOUNT-UUID disabled -` when the operator disables the account.
/// Only the server's own identifiers; no names, blobs or vectors.
enum PostgresChangeNotification {
    /// The channel every `sync-server` process on one database LISTENs on.
    static let channel = "synckeychain_changes"

    private static let revoked = "revoked"
    private static let disabled = "disabled"

    static func payload(for change: AccountChange) -> String {
        if let device = change.revokedDevice { return "\(change.account) \(revoked) \(device.rawValue)" }
        if change.disablesAccount { return "\(change.account) \(disabled) -" }
        return "\(change.account) \(change.sequence) \(change.zone)"
    }

    /// The change a payload describes; nil for anything else (someone else's NOTIFY on the channel).
    static func change(from payload: String) -> AccountChange? {
        let parts = payload.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let account = AccountID(String(parts[0])) else { return nil }
        if parts[1] == revoked {
            return DeviceID(String(parts[2])).map { AccountChange.revocation(of: $0, in: account) }
        }
        if parts[1] == disabled { return .disabling(account) }
        guard let sequence = UInt64(parts[1]) else { return nil }
        return AccountChange(account: account, zone: ZoneID(String(parts[2])), sequence: sequence)
    }
}

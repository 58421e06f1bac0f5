import Foundation

/// The NOTIFY payload that tells every server process on one database that an account changed:
/// `ACCOUNT-UUID SEQUENCE ZONE`. Only the server's own identifiers; no names, blobs or vectors.
enum PostgresChangeNotification {
    /// The channel every `sync-server` process on one database LISTENs on.
    static let channel = "synckeychain_changes"

    static func payload(for change: AccountChange) -> String {
        "\(change.account) \(change.sequence) \(change.zone)"
    }

    /// The change a payload describes; nil for anything else (someone else's NOTIFY on the channel).
    static func change(from payload: String) -> AccountChange? {
        let parts = payload.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let account = AccountID(String(parts[0])), let sequence = UInt64(parts[1]) else {
            return nil
        }
        return AccountChange(account: account, zone: String(parts[2]), sequence: sequence)
    }
}

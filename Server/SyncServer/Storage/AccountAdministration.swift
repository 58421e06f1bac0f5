import Foundation

/// One account as `sync-server admin accounts` lists it: usage and activity, never key material.
package struct AccountSummary: Sendable, Equatable {
    package var name: String
    /// Active (not revoked) devices.
    package var devices: Int
    /// Stored items, tombstones included.
    package var items: Int
    /// Stored blob bytes, every sibling and tombstone included.
    package var bytes: Int
    /// The latest sign-in or acknowledgement of any device; nil when none ever signed in.
    package var lastSeen: Date?
    package var isDisabled: Bool

    package init(name: String, devices: Int, items: Int, bytes: Int, lastSeen: Date?, isDisabled: Bool) {
        self.name = name
        self.devices = devices
        self.items = items
        self.bytes = bytes
        self.lastSeen = lastSeen
        self.isDisabled = isDisabled
    }
}

/// What operators do to accounts (decision 0152), for every backend: list them, and disable or
/// enable one. A disabled account's tokens stop working on the next request, on every process
/// (the flag lives in the shared database and is read on every authentication), and it cannot
/// sign in; nothing of it is deleted.
package protocol AccountAdministration: Sendable {
    /// Every account, ordered by name.
    func accountSummaries() async throws -> [AccountSummary]

    /// Disables or enables the account `id`; throws `notFound` for an unknown account.
    func setDisabled(_ disabled: Bool, account id: AccountID) async throws

    /// Whether the account `id` is disabled (false for an unknown one).
    func isDisabled(_ id: AccountID) async throws -> Bool
}

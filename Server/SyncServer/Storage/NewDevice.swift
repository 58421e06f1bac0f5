import SyncCore

/// A device signing in.
package struct NewDevice: Sendable, Equatable {
    package var account: AccountID
    /// Chosen by the device (its version-vector entry).
    package var id: DeviceID
    /// A human-readable name shown in device lists (validated by the HTTP layer).
    package var name: String
    /// SHA-256 of the device's bearer token; the token itself is never stored.
    package var tokenHash: [UInt8]

    package init(account: AccountID, id: DeviceID, name: String, tokenHash: [UInt8]) {
        self.account = account
        self.id = id
        self.name = name
        self.tokenHash = tokenHash
    }
}

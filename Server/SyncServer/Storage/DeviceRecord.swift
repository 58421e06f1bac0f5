import Foundation
import SyncCore

/// A stored device of an account.
package struct DeviceRecord: Sendable, Equatable {
    package var account: AccountID
    package var id: DeviceID
    package var name: String
    package var createdAt: Date
    /// The last sign-in or acknowledgement.
    package var lastSeenAt: Date
    /// When the device was revoked; nil while it is active.
    package var revokedAt: Date?

    package var isActive: Bool { revokedAt == nil }

    package init(
        account: AccountID, id: DeviceID, name: String, createdAt: Date, lastSeenAt: Date, revokedAt: Date?
    ) {
        self.account = account
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
        self.revokedAt = revokedAt
    }
}

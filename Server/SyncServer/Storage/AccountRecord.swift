import Foundation

/// A stored account.
package struct AccountRecord: Sendable, Equatable {
    package var id: AccountID
    package var name: String
    package var credentials: AccountCredentials
    package var createdAt: Date

    package init(id: AccountID, name: String, credentials: AccountCredentials, createdAt: Date) {
        self.id = id
        self.name = name
        self.credentials = credentials
        self.createdAt = createdAt
    }
}

/// An account to create.
package struct NewAccount: Sendable, Equatable {
    package var id: AccountID
    /// The unique name users sign in with (validated by the HTTP layer).
    package var name: String
    package var credentials: AccountCredentials

    package init(id: AccountID = AccountID(), name: String, credentials: AccountCredentials) {
        self.id = id
        self.name = name
        self.credentials = credentials
    }
}

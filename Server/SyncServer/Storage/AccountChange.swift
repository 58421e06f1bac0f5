/// A committed upload, as the push hub hears of it.
package struct AccountChange: Sendable, Equatable, Codable {
    package var account: AccountID
    package var zone: String
    /// The account's latest sequence number after the upload.
    package var sequence: UInt64

    package init(account: AccountID, zone: String, sequence: UInt64) {
        self.account = account
        self.zone = zone
        self.sequence = sequence
    }
}

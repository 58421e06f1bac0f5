/// Why the server refused to store an item of a batch (the batch as a whole was refused, naming
/// the item). The device sets such an item aside, a per-item problem, and pushes the rest
/// (docs/design.md §5, decision 0105).
public enum ItemRefusal: String, Hashable, Sendable, Codable, CaseIterable {
    /// Its sealed blob is over the server's size limit; it will not be taken until it changes.
    case tooLarge
    /// It would add to an account already at its item or byte quota.
    case quotaExceeded
    /// It would have more concurrent versions than the server keeps.
    case tooManySiblings

    /// A short explanation for people.
    public var explanation: String {
        switch self {
        case .tooLarge: "too large to sync: the server does not take a sealed item over its size limit"
        case .quotaExceeded: "refused by the server: the account is at its quota"
        case .tooManySiblings: "refused by the server: too many concurrent versions"
        }
    }
}

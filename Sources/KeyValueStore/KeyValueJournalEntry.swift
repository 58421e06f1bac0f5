/// One local change to a key, recorded in the same transaction as the change, for the sync
/// engine to push. Remote changes are not journaled.
public struct KeyValueJournalEntry: Hashable, Sendable {
    /// What happened to the key.
    public enum Operation: String, Hashable, Sendable {
        /// The key got a value.
        case set
        /// The key's value was removed (the key now has a tombstone).
        case remove
    }

    /// Increases with every entry of the database (all stores), never reused.
    public var sequence: Int64
    /// The store.
    public var store: String
    /// The key.
    public var key: String
    /// What happened.
    public var operation: Operation
    /// When, in milliseconds since 1970 on this device's clock (the version's modification time).
    public var modifiedAt: Int64
}

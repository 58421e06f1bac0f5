import Foundation
import KeychainModel

/// One change to a synchronizable item, recorded in the same transaction as the change.
public struct JournalEntry: Sendable, Hashable {
    /// What happened to the item.
    public enum Operation: String, Sendable, Hashable {
        /// The item (under this primary key) came into existence locally.
        case add
        /// Its attributes or secret changed, primary key unchanged.
        case update
        /// The item (under this primary key) is gone: deleted, or moved to another key.
        case delete
    }

    /// Monotonically increasing, never reused, even after entries are removed.
    public let sequence: Int64
    /// The item's row identity (stable across updates).
    public let itemIdentity: [UInt8]
    /// The item's primary key at the time of the change.
    public let primaryKey: PrimaryKey
    /// What happened.
    public let operation: Operation
    /// When it happened.
    public let time: Date
}

/// A version of an item kept in its history (a version lost in conflict resolution).
public struct HistoryVersion: Sendable, Hashable {
    /// The version's number, for ``Keychain/restoreHistoryVersion(_:)``.
    public let id: Int64
    /// The version's attributes, and its data when it was asked for.
    public let item: Item
    /// When the version was put into the history.
    public let recorded: Date
}

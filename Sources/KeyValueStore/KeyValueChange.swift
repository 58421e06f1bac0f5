/// A change to a store that did not come from this store's own local writes, as
/// `NSUbiquitousKeyValueStoreDidChangeExternallyNotification` reports it.
public struct KeyValueChange: Hashable, Sendable {
    /// Why the values changed; mirrors `NSUbiquitousKeyValueStoreChangeReasons`.
    public enum Reason: Int, Hashable, Sendable, CaseIterable {
        /// Another device changed values (`NSUbiquitousKeyValueStoreServerChange`, 0).
        case serverChange = 0
        /// The first sync of this device brought values (`NSUbiquitousKeyValueStoreInitialSyncChange`, 1).
        case initialSyncChange = 1
        /// The store is over a limit (`NSUbiquitousKeyValueStoreQuotaViolationChange`, 2).
        case quotaViolationChange = 2
        /// The account changed and the values were replaced (`NSUbiquitousKeyValueStoreAccountChange`, 3).
        case accountChange = 3
    }

    /// Why.
    public var reason: Reason
    /// The keys whose values changed, in ascending UTF-8 byte order.
    public var keys: [String]

    /// Creates a change event.
    public init(reason: Reason, keys: [String]) {
        self.reason = reason
        self.keys = keys
    }
}

import SyncCore

/// What ``KeyValueStore/synchronize()`` asks of the sync engine attached to a store with
/// ``KeyValueStore/attach(_:)``: the adapter between a store and the client's zone sync.
public protocol KeyValueSyncEngine: Sendable {
    /// Asks for a sync round of `zone` soon, without waiting for it.
    /// - Returns: Whether the request was taken (false when the engine is stopped or signed out).
    func requestSync(of zone: ZoneID) -> Bool
}

import SyncCore

/// The local side of a zone that ``MirroredZoneEngine`` keeps equal to its machine's records: a
/// key-value store, or the directory of stores (decision 0070). Unlike the keychain zone, whose
/// engine applies the machine's actions one by one, a mirror is brought up to date from the
/// records that changed, before each commit of the machine's state.
package protocol ZoneMirror: Sendable {
    /// Feeds the local changes after `position` to `machine`, their times bounded by `timeBound`
    /// (decision 0108).
    /// - Returns: The position reached, or `nil` when there was nothing new.
    mutating func takeLocalChanges(after position: Int64, into machine: inout ZoneSyncMachine, timeBound: ModificationTimeBound) throws -> Int64?

    /// Whether there are local changes after `position` that `state` does not have yet.
    func hasLocalChanges(after position: Int64, state: ZoneSyncState) throws -> Bool

    /// Whether a pulled live version's (opened) content is the item that `item` names.
    func accepts(_ content: [UInt8], for item: ItemID) -> Bool

    /// Makes the local side show the machine's record of `item`: its version, or, for `nil`, that
    /// the machine forgot the item. `previous` is the record last mirrored; `initial` says the
    /// zone is syncing for the first time; `position` is the local change position taken.
    mutating func mirror(
        _ record: ZoneSyncState.Record?, of item: ItemID, previous: ZoneSyncState.Record?, initial: Bool, position: Int64
    ) throws
}

import KeychainModel

/// One effect of a sync round on the local keychain, applied with others by
/// ``Keychain/applyRemote(_:basedOnJournal:)``.
public enum RemoteChange: Sendable, Hashable {
    /// Insert this synchronizable item, or replace the local item with its primary key.
    case store(Item)
    /// Delete the local item with this primary key, if there is one.
    case delete(PrimaryKey)
    /// Keep this version (with its data) in its primary key's history. `versionTag` names the
    /// version (the sync engine's version vector); a version already kept under the same primary
    /// key and tag is not kept twice, so replaying a resolution is harmless.
    case keepInHistory(Item, versionTag: [UInt8])

    /// The primary key of the current item this change writes, nil for history.
    var writtenKey: PrimaryKey? {
        switch self {
        case .store(let item): item.primaryKey
        case .delete(let primaryKey): primaryKey
        case .keepInHistory: nil
        }
    }
}

/// What ``Keychain/applyRemote(_:basedOnJournal:)`` did.
public enum RemoteApplyOutcome: Sendable, Hashable {
    /// Every change was applied.
    case applied
    /// Nothing was applied: these items changed locally after the journal position the changes
    /// were based on, so the caller must take those local changes into account first.
    case changedLocally(Set<PrimaryKey>)
}

/// What the sync machine asks its driver to do. Local-keychain actions, then the machine's new
/// ``ZoneSyncState``, are committed before any request is sent (two commits, decision 0107).
public enum SyncAction: Hashable, Sendable {
    /// Send this batch to the server (seal each version first).
    case push(PushBatch<ItemVersion>)
    /// Send this pull request to the server.
    case pull(PullRequest)
    /// Write this value into the local keychain, replacing the local copy.
    case store(ItemID, ItemVersion)
    /// Delete the local copy.
    case remove(ItemID)
    /// Keep this losing version in the item's local history, where the user can restore it.
    case keepInHistory(ItemID, ItemVersion)
    /// A pulled version was refused; report it (the server misbehaves or replays old data).
    case reject(ItemID, Rejection)
    /// A full resync did not list an item whose value the server had: the local copy is kept and
    /// not pushed (absence is not deletion, docs/design.md §5); report it as a problem.
    case unlisted(ItemID)
    /// The round is over: the zone is in step with the server as of the stored cursor.
    case synced

    /// Why a pulled version was refused.
    public enum Rejection: Hashable, Sendable {
        /// The version is older than one the server already acknowledged for this item: the
        /// vector goes backwards.
        case vectorWentBackwards
        /// The version claims a write by this device that this device never made.
        case unknownWriteOfThisDevice
        /// The item's versions leave out one the server acknowledged or sent before, which no
        /// version listed descends from: an honest server only replaces a version by one that
        /// descends from it (a replay of an older state, or a hidden sibling; decision 0235).
        case acknowledgedVersionLeftOut
    }
}

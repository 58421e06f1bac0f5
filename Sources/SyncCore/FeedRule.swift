/// The feed's decisions every server storage shares (SQLite, PostgreSQL, the model), beside the
/// upload's ``BatchMerge``: what a collection keeps, and what a full resync lists (rules R6–R10a
/// of docs/sync-rules.md).
public enum FeedRule {
    /// What a pull is answered.
    public enum Admission: Hashable, Sendable {
        /// A page. `startsResync`: the device was marked to resync (R11) and this full resync from
        /// 0 clears the mark, in the transaction that serves the page (R8).
        case serve(startsResync: Bool)
        /// The cursor can no longer be served: it is below the zone's horizon, or the device must
        /// resync from 0 first (`cursor_expired`, R8).
        case expired
        /// The account was restored from a backup that ended at sequence `through`, and the
        /// cursor, or the latest sequence the device was told, is ahead of it, and the cursor below
        /// the restore's jump: the device has seen changes the server lost (`feed_restored`, R9).
        case restored(through: UInt64)
    }

    /// How far a restore moves every account's sequence on: past any cursor a device can hold from
    /// before the restore, so the writes made after it reach every device (R9, decision 0153).
    public static let restoredSequenceJump: UInt64 = 1 << 40

    /// The answer to a pull after `after` (a full resync's pages, `fullResync`, are positions in
    /// the resync, not cursors) by a device marked `mustResync` or not, that was told of the
    /// account's sequences up to `told` (a push's answer, a last page; its cursor may lag behind),
    /// in a zone whose horizon is `horizon`, of an account restored from a backup that ended at
    /// `restoredThrough` (nil: never).
    public static func admission(
        after: UInt64, told: UInt64 = 0, fullResync: Bool, mustResync: Bool, horizon: UInt64, restoredThrough: UInt64?
    ) -> Admission {
        if mustResync { return fullResync && after == 0 ? .serve(startsResync: true) : .expired }
        guard !fullResync else { return .serve(startsResync: false) }
        if after < horizon { return .expired }
        // A device whose push past the backup's end was answered, and whose pull after it was not,
        // has a cursor the backup covers: what it was told says it saw what the restore lost.
        if let backup = restoredThrough, after < backup &+ restoredSequenceJump, max(after, told) > backup {
            return .restored(through: backup)
        }
        return .serve(startsResync: false)
    }

    /// The cursor a page hands back: its last item's sequence while more follow; on the last page
    /// the account's latest sequence, never below the pull's cursor (R6).
    public static func cursor(after: UInt64, lastItem: UInt64?, hasMore: Bool, latest: UInt64) -> UInt64 {
        if hasMore, let lastItem { return lastItem }
        return max(after, latest)
    }

    /// The most collected deletions a zone keeps (rule R10a); past it, the oldest (lowest
    /// sequence) go first. A device away longer than those deletions took to accumulate keeps and
    /// reports the items whose evidence went, as before rule R10a.
    public static let maximumCollectedDeletions = 100_000

    /// Whether a full resync lists the collected deletions: only when the device asks (it holds
    /// items to reconcile), and never to a pull from a cursor (a cursor at or past the horizon has
    /// seen every collected tombstone as it was written).
    public static func listsCollectedDeletions(fullResync: Bool, asked: Bool) -> Bool {
        fullResync && asked
    }

    /// The collection time a page carries (its `deletionsCollectedAt`): when a deletion a device
    /// never saw may have been removed without trace. A page that lists the collected deletions
    /// leaves out only deletions the zone forgot without evidence (collected before it kept them,
    /// or dropped past ``maximumCollectedDeletions``): it carries when that last happened (nil:
    /// never). Any other page carries the zone's last collection. A returning device judges its
    /// unlisted copies by it (rules R49 C1, C2, C5 of docs/sync-rules.md).
    public static func collectionTime<Time>(listsCollectedDeletions: Bool, collectedAt: Time?, forgottenAt: Time?) -> Time? {
        listsCollectedDeletions ? forgottenAt : collectedAt
    }
}

extension FeedRule {
    /// A full resync's page with the collected deletions merged in, for a storage that reads the
    /// two apart: `items` is the page of the zone's items (cut at `limit` and the byte budget,
    /// `hasMore` when more follow), `collected` the first collected deletions after the same
    /// cursor (at most `limit` + 1). The result is the prefix of both, in sequence order, that the
    /// same limit and byte budget allow (at least one item), and whether more follow.
    public static func page(
        merging items: [ChangedItem<SealedVersion>], hasMore: Bool, with collected: [ChangedItem<SealedVersion>], limit: Int,
        maximumBytes: Int
    ) -> (items: [ChangedItem<SealedVersion>], hasMore: Bool) {
        // Past the last item of a cut page, the items are unknown: no collected deletion beyond it.
        let bound = hasMore ? items.last?.sequence ?? 0 : .max
        let candidates = (items + collected.filter { $0.sequence <= bound }).sorted { $0.sequence < $1.sequence }
        var page: [ChangedItem<SealedVersion>] = []
        var bytes = 0
        for item in candidates {
            guard page.count < max(1, limit), page.isEmpty || bytes < maximumBytes else { break }
            page.append(item)
            bytes += BatchMerge.bytes(item.versions)
        }
        let more = hasMore || page.count < candidates.count || collected.contains { $0.sequence > bound }
        return (page, more)
    }
}

/// The feed's decisions every server storage shares (SQLite, PostgreSQL, the model), beside the
/// upload's ``BatchMerge``: what a collection keeps, and what a full resync lists (rules R6–R10a
/// of docs/sync-rules.md).
public enum FeedRule {
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

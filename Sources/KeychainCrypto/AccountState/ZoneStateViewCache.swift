import SyncCore

/// One stored version as a ``ZoneStateView`` counts it: its vector and whether it is a deletion.
public struct ZoneStateVersion: Hashable, Sendable {
    /// The version's vector.
    public var vector: VersionVector
    /// Whether the version is a deletion.
    public var isDeleted: Bool

    /// Creates a version.
    public init(vector: VersionVector, isDeleted: Bool) {
        self.vector = vector
        self.isDeleted = isDeleted
    }
}

/// Keeps every item's digest terms between views of one zone (decision 0180), so a view costs one
/// HMAC per version that changed since the last one, plus an addition and a vector join per
/// version: what makes the check at the end of every pull cheap for a large zone.
public struct ZoneStateViewCache: Sendable {
    private struct Entry: Sendable {
        var versions: [ZoneStateVersion]
        var terms: [ZoneStateDigest.Term]
    }

    private let zone: String
    private let hasher: ZoneStateDigest.Hasher
    private var entries: [ItemID: Entry] = [:]

    /// An empty cache for `zone`, whose terms `hasher` computes.
    public init(zone: String, hasher: ZoneStateDigest.Hasher) {
        self.zone = zone
        self.hasher = hasher
    }

    /// The view of a state given item by item, each with its stored versions; the same as
    /// ``ZoneStateView/init(zone:hasher:versions:)`` of those versions.
    public mutating func view(of items: some Sequence<(item: ItemID, versions: [ZoneStateVersion])>) -> ZoneStateView {
        let items = Array(items)
        // The cached terms of each item whose versions did not change; the others computed, on
        // every core when there are many.
        var terms = items.map { item, versions in entries[item].flatMap { $0.versions == versions ? $0.terms : nil } }
        let stale = terms.indices.filter { terms[$0] == nil }
        let (zone, hasher) = (zone, hasher)
        let computed = ParallelWork.results(stale.count) { index in
            let (item, versions) = items[stale[index]]
            return versions.filter { !$0.isDeleted }.map { hasher.term(zone: zone, item: item, vector: $0.vector, isDeleted: false) }
        }
        for (index, itemTerms) in zip(stale, computed) { terms[index] = itemTerms }
        var frontier = VersionVector()
        var live = VersionVector()
        var digest = ZoneStateDigest()
        // Only the items of this view are kept: an item gone from the state leaves the cache.
        var kept: [ItemID: Entry] = [:]
        kept.reserveCapacity(items.count)
        // Every item's terms are known now.
        for ((item, versions), terms) in zip(items, terms.compactMap { $0 }) {
            kept[item] = Entry(versions: versions, terms: terms)
            for version in versions {
                frontier.join(version.vector)
                if !version.isDeleted { live.join(version.vector) }
            }
            for term in terms { digest.insert(term) }
        }
        entries = kept
        return ZoneStateView(frontier: frontier, liveFrontier: live, digest: digest)
    }
}

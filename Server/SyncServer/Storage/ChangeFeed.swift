/// The answer to a ``ChangeQuery``.
package enum ChangeFeed: Sendable, Equatable {
    /// The next page of changes.
    case page(ChangePage)
    /// Tombstones newer than the cursor were collected (the newest at sequence `horizon`): the
    /// client must reconcile in full.
    case cursorExpired(horizon: UInt64)
}

/// A page of a zone's change feed.
package struct ChangePage: Sendable, Equatable {
    /// Items changed after the cursor, by ascending sequence; each item appears once, with all of
    /// its current versions (siblings), at the sequence of its latest change.
    package var items: [ItemState]
    /// The cursor to ask for the next page with: the last item's sequence while more follow; on
    /// the last page, the account's latest sequence (never below the query's cursor).
    package var cursor: UInt64
    /// Whether more changes follow the page.
    package var hasMore: Bool

    package init(items: [ItemState], cursor: UInt64, hasMore: Bool) {
        self.items = items
        self.cursor = cursor
        self.hasMore = hasMore
    }
}

/// An item's current versions and the sequence number of its latest change.
package struct ItemState: Sendable, Equatable {
    package var id: String
    package var sequence: UInt64
    /// One or more versions: several are concurrent siblings; a single deleted one is a tombstone.
    package var versions: [StoredVersion]

    package init(id: String, sequence: UInt64, versions: [StoredVersion]) {
        self.id = id
        self.sequence = sequence
        self.versions = versions
    }
}

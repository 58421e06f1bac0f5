import Foundation
import SyncCore

/// The answer to a ``ChangeQuery``.
package enum ChangeFeed: Sendable, Equatable {
    /// The next page of changes.
    case page(ChangePage)
    /// Tombstones newer than the cursor were collected (the newest at sequence `horizon`): the
    /// client must reconcile in full.
    case cursorExpired(horizon: UInt64)
    /// The server was restored from a backup made at sequence `through`, and the cursor lies
    /// between it and the restore's sequence jump: the device has seen changes the server lost.
    /// It reconciles in full and pushes again what the server no longer lists (decision 0154).
    case restored(through: UInt64)

    /// How far a restore moves every account's sequence on (``FeedRule/restoredSequenceJump``).
    package static let restoredSequenceJump = Int64(FeedRule.restoredSequenceJump)

    /// The answer for `admission` when it is not a page: nil for a page, which the storage reads.
    static func refusal(_ admission: FeedRule.Admission, horizon: UInt64) -> ChangeFeed? {
        switch admission {
        case .serve: nil
        case .expired: .cursorExpired(horizon: horizon)
        case .restored(let through): .restored(through: through)
        }
    }
}

/// A page of a zone's change feed.
package struct ChangePage: Sendable, Equatable {
    /// Items changed after the cursor, by ascending sequence; each item appears once, with all of
    /// its current versions (siblings), at the sequence of its latest change.
    package var items: [ChangedItem<SealedVersion>]
    /// The cursor to ask for the next page with: the last item's sequence while more follow; on
    /// the last page, the account's latest sequence (never below the query's cursor).
    package var cursor: UInt64
    /// Whether more changes follow the page.
    package var hasMore: Bool
    /// When the zone's tombstones were last collected; nil: never (decision 0175).
    package var deletionsCollectedAt: Date?

    /// ``deletionsCollectedAt`` as the wire has it: milliseconds since 1970.
    package var deletionsCollectedAtMilliseconds: Int64? {
        deletionsCollectedAt.map { Int64(($0.timeIntervalSince1970 * 1000).rounded(.down)) }
    }

    package init(items: [ChangedItem<SealedVersion>], cursor: UInt64, hasMore: Bool, deletionsCollectedAt: Date? = nil) {
        self.items = items
        self.cursor = cursor
        self.hasMore = hasMore
        self.deletionsCollectedAt = deletionsCollectedAt
    }
}

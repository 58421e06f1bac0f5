/// A value with a version vector: what the server merge rule works on. The server never looks
/// inside the payload, only at the vector.
public protocol Versioned {
    /// The history this version has seen, including itself.
    var vector: VersionVector { get }
}

/// The server's rule for merging an incoming version of one item into the versions it stores.
///
/// - A version dominated by or equal to a stored one is *stale*: acknowledged but not stored, so a
///   retried upload is idempotent.
/// - Stored versions the incoming one dominates are replaced.
/// - Versions that are concurrent are all kept as siblings.
///
/// Nothing that no other version dominates is ever dropped. Siblings are bounded: with vectors
/// written by devices (each device's new write dominates its own earlier ones), an item has at most
/// one sibling per writing device; a write that would push an item past
/// ``maximumSiblings`` is refused whole, never resolved by dropping a version.
public enum ServerMerge {
    /// The most concurrent versions kept for one item.
    public static let maximumSiblings = 32

    /// What happened to an incoming version.
    public enum Outcome: String, Sendable, Equatable, Codable {
        /// Dominated by or equal to a stored version: acknowledged, not stored.
        case stale
        /// Stored; it replaced every version it dominates and no sibling remains beside it.
        case applied
        /// Stored next to at least one concurrent sibling.
        case conflictKept
        /// Refused: storing it would exceed ``ServerMerge/maximumSiblings``.
        case tooManySiblings
    }

    /// The outcome of one merge and the stored set that follows from it.
    public struct Result<Version> {
        /// What happened to the incoming version.
        public var outcome: Outcome
        /// The versions to store after the merge (unchanged unless the outcome stores).
        public var siblings: [Version]
        /// The stored versions the incoming one replaced.
        public var replaced: [Version]
    }

    /// Merges `incoming` into `stored`, the item's current siblings.
    public static func merge<Version: Versioned>(
        _ incoming: Version,
        into stored: [Version],
        maximumSiblings: Int = ServerMerge.maximumSiblings
    ) -> Result<Version> {
        if stored.contains(where: { $0.vector.descends(from: incoming.vector) }) {
            return Result(outcome: .stale, siblings: stored, replaced: [])
        }
        var kept: [Version] = []
        var replaced: [Version] = []
        for version in stored {
            if incoming.vector.compare(to: version.vector) == .dominates {
                replaced.append(version)
            } else {
                kept.append(version)
            }
        }
        guard kept.count + 1 <= maximumSiblings else {
            return Result(outcome: .tooManySiblings, siblings: stored, replaced: [])
        }
        let outcome: Outcome = kept.isEmpty ? .applied : .conflictKept
        return Result(outcome: outcome, siblings: kept + [incoming], replaced: replaced)
    }
}

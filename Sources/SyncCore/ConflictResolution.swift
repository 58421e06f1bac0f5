/// The deterministic rule that picks one value among concurrent versions, the same on every device
/// whatever the order in which they arrived.
///
/// First, a version is *superseded* when a user overwrote or deleted its value: another
/// candidate's ``ItemVersion/overwritten`` descends from its ``ItemVersion/origin``. A copy of
/// such a value (a resolution made elsewhere) must not come back, even when the deletion that
/// overwrote it lost to a concurrent update. Among the rest, an update beats a delete; between two updates, or two deletes, the later
/// modification time wins; then the greater device ID (bytewise); then the greater content
/// (bytewise), so that the order is total over distinct values. Vectors play no part in the
/// order, so resolutions made independently by two devices carry the same value and the next
/// round settles on it.
public enum ConflictResolution {
    /// The candidates no other candidate supersedes (empty when every value was overwritten or
    /// deleted by a user).
    public static func contenders(_ versions: [ItemVersion]) -> [ItemVersion] {
        versions.filter { version in
            !versions.contains { !$0.sameValue(as: version) && $0.overwritten.descends(from: version.origin) }
        }
    }

    /// The version whose value wins among `versions`; `nil` for none.
    ///
    /// When every value was overwritten or deleted by a user (for instance two deletions that
    /// each lost to a concurrent update, of each other's update), no value may come back: the
    /// result is a deletion, the same on every device (latest time, the order's winner's device,
    /// the join of the origins), and the resolving device keeps every live value in its history.
    public static func resolve(_ versions: [ItemVersion]) -> ItemVersion? {
        let standing = contenders(versions)
        if !standing.isEmpty || versions.isEmpty { return winner(of: standing) }
        let latest = winner(of: versions)!
        return ItemVersion(
            vector: .join(versions.map(\.vector)), isDeleted: true,
            modifiedAt: versions.map(\.modifiedAt).max()!, device: latest.device, content: [],
            origin: .join(versions.map(\.origin)), overwritten: .join(versions.map(\.overwritten))
        )
    }

    /// Whether `lhs` loses to `rhs`.
    public static func losesTo(_ lhs: ItemVersion, _ rhs: ItemVersion) -> Bool {
        if lhs.isDeleted != rhs.isDeleted { return lhs.isDeleted }
        if lhs.modifiedAt != rhs.modifiedAt { return lhs.modifiedAt < rhs.modifiedAt }
        if lhs.device != rhs.device { return lhs.device < rhs.device }
        return lhs.content.lexicographicallyPrecedes(rhs.content)
    }

    /// The resolution of `candidates` under `vector` (which must dominate them all): the winner's
    /// value, with everything any candidate overwrote. `nil` for no candidates.
    public static func resolution(of candidates: [ItemVersion], vector: VersionVector) -> ItemVersion? {
        guard var resolved = resolve(candidates)?.with(vector: vector) else { return nil }
        resolved.overwritten = .join(candidates.map(\.overwritten))
        return resolved
    }

    /// The greatest of `versions` in the order above, supersession left aside; `nil` for none.
    public static func winner(of versions: [ItemVersion]) -> ItemVersion? {
        versions.max(by: losesTo)
    }

    /// The versions no other one of `versions` dominates, without duplicates of a vector.
    public static func maximal<Version: Versioned>(_ versions: [Version]) -> [Version] {
        var result: [Version] = []
        for version in versions {
            if result.contains(where: { $0.vector.descends(from: version.vector) }) { continue }
            result.removeAll { version.vector.compare(to: $0.vector) == .dominates }
            result.append(version)
        }
        return result
    }
}

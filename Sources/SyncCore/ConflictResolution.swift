/// The deterministic rule that picks one value among concurrent versions, the same on every device
/// whatever the order in which they arrived.
///
/// An update beats a delete; between two updates, or two deletes, the later modification time
/// wins; then the greater device ID (bytewise); then the greater content (bytewise), so that the
/// order is total over distinct values. The vector plays no part, so resolutions made
/// independently by two devices carry the same value and the next round settles on it.
public enum ConflictResolution {
    /// Whether `lhs` loses to `rhs`.
    public static func losesTo(_ lhs: ItemVersion, _ rhs: ItemVersion) -> Bool {
        if lhs.isDeleted != rhs.isDeleted { return lhs.isDeleted }
        if lhs.modifiedAt != rhs.modifiedAt { return lhs.modifiedAt < rhs.modifiedAt }
        if lhs.device != rhs.device { return lhs.device < rhs.device }
        return lhs.content.lexicographicallyPrecedes(rhs.content)
    }

    /// The winning value among `versions`; `nil` for none.
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

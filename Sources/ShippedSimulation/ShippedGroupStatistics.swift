/// What a group run found and did.
package struct ShippedGroupResult: Sendable {
    package var violations: [ShippedViolation]
    package var statistics: ShippedGroupStatistics
}

/// What a group run exercised.
package struct ShippedGroupStatistics: Sendable, CustomStringConvertible {
    package var writes = 0
    package var deletions = 0
    package var syncs = 0
    package var failedSyncs = 0
    package var removals = 0
    package var additions = 0
    package var leaves = 0
    /// New key epochs Alice's devices started because a leave made one due.
    package var rekeys = 0
    /// Syncs that reported versions refused (a writer the group log does not admit).
    package var refused = 0
    /// Syncs of a device of Bob's, kept from his removal, that found it in Alice's statements.
    package var withheldRemovalsFound = 0
    /// Syncs of a device of Bob's, served fewer items than Alice's devices stated, that said so.
    package var hiddenItemsFound = 0
    /// Times a device of Bob's, finding him out of the group, forgot it (decision 0299).
    package var forgotten = 0
    /// Items a device reports a problem with at the end (a refused version, a copy kept unlisted).
    package var reportedItems = 0

    package init() {}

    package mutating func add(_ other: ShippedGroupStatistics) {
        writes += other.writes
        deletions += other.deletions
        syncs += other.syncs
        failedSyncs += other.failedSyncs
        removals += other.removals
        additions += other.additions
        leaves += other.leaves
        rekeys += other.rekeys
        refused += other.refused
        withheldRemovalsFound += other.withheldRemovalsFound
        hiddenItemsFound += other.hiddenItemsFound
        forgotten += other.forgotten
        reportedItems += other.reportedItems
    }

    package var description: String {
        "writes \(writes), deletions \(deletions), syncs \(syncs) (\(failedSyncs) failed), removals \(removals), additions \(additions), leaves \(leaves), re-keys after them \(rekeys), syncs reporting refused versions \(refused), withheld removals found \(withheldRemovalsFound), hidden items found \(hiddenItemsFound), groups forgotten \(forgotten), items reported at the end \(reportedItems)"
    }
}

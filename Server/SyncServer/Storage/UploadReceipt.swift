import SyncCore

/// The result of an accepted batch: one outcome per item, in the batch's order.
package struct UploadReceipt: Sendable, Equatable {
    /// What happened to one item of the batch.
    package struct ItemResult: Sendable, Equatable {
        package var id: ItemID
        /// `.stale`, `.applied` or `.conflictKept` (a `.tooManySiblings` item refuses the batch).
        package var outcome: ServerMerge.Outcome
        /// The sequence number given to the write; nil when it was stale.
        package var sequence: UInt64?

        package init(id: ItemID, outcome: ServerMerge.Outcome, sequence: UInt64?) {
            self.id = id
            self.outcome = outcome
            self.sequence = sequence
        }
    }

    package var results: [ItemResult]
    /// The account's latest sequence number after the batch.
    package var latestSequence: UInt64

    package init(results: [ItemResult], latestSequence: UInt64) {
        self.results = results
        self.latestSequence = latestSequence
    }
}

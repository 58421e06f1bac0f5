import SyncCore

extension UploadBatch {
    /// The distinct item IDs of the batch, in the batch's order.
    var distinctIDs: [ItemID] {
        var seen = Set<ItemID>()
        return items.map(\.key).filter { seen.insert($0).inserted }
    }
}

extension BatchMerge.Answer where Key == ItemID {
    /// The answer as the storage contract gives it: a receipt when committed, else the error.
    func receipt() throws -> UploadReceipt {
        switch status {
        case .committed:
            return UploadReceipt(
                results: results.map { .init(id: $0.key, outcome: $0.outcome, sequence: $0.sequence) },
                latestSequence: latestSequence)
        case .cursorExpired:
            throw SyncServerError(.cursorExpired, "the batch was made at a cursor below the zone's horizon, or the device must resync first")
        case .tooManySiblings:
            throw SyncServerError(.tooManySiblings, "items of the batch would have too many concurrent versions", items: refused)
        case .quotaExceeded:
            throw SyncServerError(.quotaExceeded, "items of the batch would take the account past its quota", items: refused)
        }
    }
}

extension BatchMerge.Decision where Key == ItemID {
    /// Whether the storage records the batch's cursor as acknowledged.
    var acknowledgesCursor: Bool {
        switch self {
        case .commit: true
        case .answer(_, let acknowledge): acknowledge
        }
    }
}

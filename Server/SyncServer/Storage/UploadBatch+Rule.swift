import Foundation
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
        case .superseded:
            throw SyncServerError(.superseded, "the batch is older than the device's last batch; nothing was merged")
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
        case .answer(_, _, let acknowledge): acknowledge
        }
    }

    /// Whether the storage remembers the answer as the device's last batch.
    var remembersAnswer: Bool {
        switch self {
        case .commit: true
        case .answer(_, let remember, _): remember
        }
    }
}

extension BatchMerge.RememberedBatch where Key == ItemID {
    /// The remembered answer as a backend stores it (JSON).
    func encodedAnswer() throws -> [UInt8] {
        do {
            return Array(try JSONEncoder().encode(answer))
        } catch {
            throw SyncServerError(.storageFailure, "cannot encode a batch answer", underlying: error)
        }
    }

    /// A remembered batch read back from a backend.
    init(batchID: UInt64, encodedAnswer: some Collection<UInt8>) throws {
        do {
            self.init(batchID: batchID, answer: try JSONDecoder().decode(BatchMerge.Answer<ItemID>.self, from: Data(encodedAnswer)))
        } catch {
            throw SyncServerError(.storageFailure, "the database holds an unreadable batch answer", underlying: error)
        }
    }
}

import Foundation
import GRDB
import SyncCore

extension SQLiteStorage {
    package func upload(_ batch: UploadBatch, limits: UploadLimits, now: Date) async throws -> UploadReceipt {
        let receipt = try await write("uploading a batch") { db in try Self.apply(batch, limits: limits, in: db) }
        if receipt.results.contains(where: { $0.sequence != nil }) {
            broadcaster.publish(AccountChange(account: batch.account, zone: batch.zone, sequence: receipt.latestSequence))
        }
        return receipt
    }

    /// Merges the batch inside the caller's transaction; throwing rolls everything back.
    private static func apply(_ batch: UploadBatch, limits: UploadLimits, in db: Database) throws -> UploadReceipt {
        let account = batch.account.description
        guard let row = try Row.fetchOne(
            db, sql: "SELECT latestSequence, itemCount FROM account WHERE id = ?", arguments: [account])
        else { throw SyncServerError(.notFound, "no such account") }
        var sequence: Int64 = row["latestSequence"]
        let itemCount: Int = row["itemCount"]
        let horizon = try Int64.fetchOne(
            db, sql: "SELECT horizon FROM zone WHERE account = ? AND name = ?", arguments: [account, batch.zone]) ?? 0
        guard Int64(clamping: batch.cursor) >= horizon else {
            throw SyncServerError(.cursorExpired, "the batch was made at a cursor below the zone's horizon")
        }

        // The batch's working set: each touched item's versions, and whether it is new.
        var touched: [String: (versions: [StoredVersion], isNew: Bool, sequence: Int64?)] = [:]
        let select = try db.cachedStatement(sql: "SELECT versions FROM item WHERE account = ? AND zone = ? AND id = ?")
        var results: [UploadReceipt.ItemResult] = []
        results.reserveCapacity(batch.items.count)
        for item in batch.items {
            var current = touched[item.id]
            if current == nil {
                let stored = try Data.fetchOne(select, arguments: [account, batch.zone, item.id])
                current = (try stored.map { try StoredVersion.decode($0) } ?? [], stored == nil, nil)
            }
            let merge = ServerMerge.merge(item.version, into: current!.versions, maximumSiblings: limits.maximumSiblings)
            switch merge.outcome {
            case .stale:
                touched[item.id] = current
                results.append(.init(id: item.id, outcome: .stale, sequence: nil))
            case .tooManySiblings:
                throw SyncServerError(.tooManySiblings, "an item of the batch has too many concurrent versions")
            case .applied, .conflictKept:
                sequence += 1
                touched[item.id] = (merge.siblings, current!.isNew, sequence)
                results.append(.init(id: item.id, outcome: merge.outcome, sequence: UInt64(sequence)))
            }
        }
        let written = touched.filter { $0.value.sequence != nil }
        let newItems = written.values.filter(\.isNew).count
        guard itemCount + newItems <= limits.maximumItemsPerAccount else {
            throw SyncServerError(.quotaExceeded, "the account would hold too many items")
        }
        let upsert = try db.cachedStatement(sql: """
            INSERT INTO item (account, zone, id, sequence, tombstone, versions) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (account, zone, id) DO UPDATE SET
                sequence = excluded.sequence, tombstone = excluded.tombstone, versions = excluded.versions
            """)
        for (id, state) in written {
            let tombstone = state.versions.allSatisfy(\.deleted)
            try upsert.execute(arguments: [
                account, batch.zone, id, state.sequence, tombstone, Data(StoredVersion.encode(state.versions)),
            ])
        }
        if !written.isEmpty {
            try db.execute(
                sql: "UPDATE account SET latestSequence = ?, itemCount = itemCount + ? WHERE id = ?",
                arguments: [sequence, newItems, account])
        }
        return UploadReceipt(results: results, latestSequence: UInt64(sequence))
    }
}

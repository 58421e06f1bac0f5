import DurableSQLite
import Foundation
import GRDB
import SyncCore

extension SQLiteStorage {
    package func upload(_ batch: UploadBatch, limits: UploadLimits, now: Date) async throws -> UploadReceipt {
        let answer = try await write("uploading a batch") { db in try Self.apply(batch, limits: limits, now: now, in: db) }
        if answer.status == .committed, answer.results.contains(where: { $0.sequence != nil }) {
            broadcaster.publish(AccountChange(account: batch.account, zone: batch.zone, sequence: answer.latestSequence))
        }
        return try answer.receipt()
    }

    /// Reads the batch's working set, asks the one rule (`BatchMerge`) and stores what it says,
    /// inside the caller's transaction.
    private static func apply(
        _ batch: UploadBatch, limits: UploadLimits, now: Date, in db: Database
    ) throws -> BatchMerge.Answer<ItemID> {
        let account = batch.account.description
        let zone = batch.zone.rawValue
        guard let row = try Row.fetchOne(
            db, sql: "SELECT latestSequence, itemCount, storedBytes FROM account WHERE id = ?", arguments: [account])
        else { throw SyncServerError(.notFound, "no such account") }
        let horizon = try Int64.fetchOne(
            db, sql: "SELECT horizon FROM zone WHERE account = ? AND name = ?", arguments: [account, zone]) ?? 0
        let device = try DeviceZoneState.fetch(account: account, device: batch.device, zone: batch.zone, in: db)
        let select = try db.cachedStatement(sql: "SELECT versions FROM item WHERE account = ? AND zone = ? AND id = ?")
        var stored: [ItemID: [SealedVersion]] = [:]
        for id in batch.distinctIDs {
            if let versions = try Data.fetchOne(select, arguments: [account, zone, id.rawValue]) {
                stored[id] = try SealedVersion.decode(versions)
            }
        }
        let set = BatchMerge.WorkingSet(
            latestSequence: UInt64(row["latestSequence"] as Int64),
            usage: BatchMerge.Usage(items: row["itemCount"], bytes: row["storedBytes"]),
            horizon: UInt64(horizon), mustResync: device?.mustResync ?? false, stored: stored)
        let decision = BatchMerge.decide(batch.rule, in: set, limits: limits.rule)
        if case .commit(let plan) = decision {
            let upsert = try db.cachedStatement(sql: """
                INSERT INTO item (account, zone, id, sequence, tombstone, versions, bytes) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (account, zone, id) DO UPDATE SET
                    sequence = excluded.sequence, tombstone = excluded.tombstone, versions = excluded.versions,
                    bytes = excluded.bytes
                """)
            for id in plan.order {
                let write = plan.writes[id]!
                try upsert.execute(arguments: [
                    account, zone, id.rawValue, Int64(write.sequence), write.siblings.allSatisfy(\.isDeleted),
                    Data(SealedVersion.encode(write.siblings)), BatchMerge.bytes(write.siblings),
                ])
            }
            try db.executeCached(
                sql: "UPDATE account SET latestSequence = ?, itemCount = ?, storedBytes = ? WHERE id = ?",
                arguments: [Int64(plan.latestSequence), plan.usage.items, plan.usage.bytes, account])
        }
        if decision.acknowledgesCursor {
            try DeviceZoneState.record(
                account: account, device: batch.device, zone: batch.zone,
                acknowledged: min(batch.cursor, decision.answer.latestSequence), now: now, in: db)
        }
        return decision.answer
    }
}

import Foundation
import PostgresNIO
import SyncCore

extension PostgresStorage {
    /// A version during a batch merge: stored already (with its row's sequence), or new in this
    /// batch (with its position in the batch, whose result gives the sequence it is written at).
    struct PendingVersion: StorableVersion {
        var version: SealedVersion
        var sequence: Int64
        var isNew: Bool

        var vector: VersionVector { version.vector }
        var byteCount: Int { version.payload.count }
    }

    /// One transaction: lock the account's counter row (batches of one account serialize here),
    /// read the working set (the batch's items' siblings FOR UPDATE, the device's state in the
    /// zone), ask the one rule (`BatchMerge`), then write what it says with array-bound bulk
    /// statements and NOTIFY the other processes (a NOTIFY is delivered only if the transaction
    /// commits).
    package func upload(_ batch: UploadBatch, limits: UploadLimits, now: Date) async throws -> UploadReceipt {
        let answer = try await attempt("store an upload") {
            try await client.inTransaction(logger: logger) { connection in
                let counters = try await lockAccount(batch.account, zone: batch.zone, on: connection)
                let device = try await deviceZoneState(batch.device, of: batch.account, zone: batch.zone, on: connection)
                let stored = try await storedVersions(of: batch.distinctIDs, in: batch, on: connection)
                let set = BatchMerge.WorkingSet(
                    latestSequence: UInt64(counters.lastSequence),
                    usage: BatchMerge.Usage(items: Int(counters.itemCount), bytes: Int(counters.storedBytes)),
                    horizon: UInt64(counters.horizon), mustResync: device?.mustResync ?? false, stored: stored)
                let incoming = BatchMerge.Batch(cursor: batch.cursor, items: batch.items.enumerated().map {
                    BatchMerge.Incoming(key: $1.key, version: PendingVersion(version: $1.version, sequence: Int64($0), isNew: true))
                })
                let decision = BatchMerge.decide(incoming, in: set, limits: limits.rule)
                if case .commit(let plan) = decision, !plan.writes.isEmpty {
                    try await write(plan, stored: stored, of: batch, on: connection)
                    try await connection.query(
                        """
                        UPDATE account_sequences SET last_sequence = \(Int64(plan.latestSequence)),
                            item_count = \(Int64(plan.usage.items)), stored_bytes = \(Int64(plan.usage.bytes))
                        WHERE account_id = \(batch.account.rawValue)
                        """,
                        logger: logger
                    )
                    let change = AccountChange(account: batch.account, zone: batch.zone, sequence: plan.latestSequence)
                    try await connection.query(
                        "SELECT pg_notify(\(PostgresChangeNotification.channel), \(PostgresChangeNotification.payload(for: change)))",
                        logger: logger
                    )
                }
                if decision.acknowledgesCursor {
                    try await recordDeviceZoneState(
                        batch.device, of: batch.account, zone: batch.zone,
                        acknowledged: min(batch.cursor, decision.answer.latestSequence), now: now, on: connection)
                }
                return decision.answer
            }
        }
        return try answer.receipt()
    }

    /// Locks the account's counter row (see ``lockAccount(_:on:)``) and reads the zone's horizon,
    /// which cannot move while the lock is held (collection takes the same lock).
    private func lockAccount(_ account: AccountID, zone: ZoneID, on connection: PostgresConnection) async throws -> (
        lastSequence: Int64, itemCount: Int64, storedBytes: Int64, horizon: Int64
    ) {
        let rows = try await connection.rows(
            """
            SELECT s.last_sequence, s.item_count, s.stored_bytes, coalesce(h.horizon, 0)
            FROM account_sequences s
            LEFT JOIN zone_horizons h ON h.account_id = s.account_id AND h.zone = \(zone.rawValue)
            WHERE s.account_id = \(account.rawValue)
            FOR UPDATE OF s
            """,
            logger: logger
        ).decode((Int64, Int64, Int64, Int64).self).all()
        guard let row = rows.first else { throw SyncServerError(.notFound, "no such account") }
        return (row.0, row.1, row.2, row.3)
    }

    /// The current versions of `ids` in the batch's zone, locked until the transaction ends.
    private func storedVersions(
        of ids: [ItemID], in batch: UploadBatch, on connection: PostgresConnection
    ) async throws -> [ItemID: [PendingVersion]] {
        let rows = try await connection.query(
            """
            SELECT ids.id, v.sequence, v.vector, v.deleted, v.blob
            FROM unnest(\(ids.map(\.rawValue))::text[]) AS ids(id)
            CROSS JOIN LATERAL (
                -- One primary-key probe per item, whatever the table statistics say.
                SELECT sequence, vector, deleted, blob FROM item_versions
                WHERE account_id = \(batch.account.rawValue) AND zone = \(batch.zone.rawValue) AND item_id = ids.id
                FOR UPDATE
            ) AS v
            ORDER BY ids.id, v.sequence
            """,
            logger: logger
        )
        var versions: [ItemID: [PendingVersion]] = [:]
        for try await (id, sequence, vector, deleted, blob) in rows.decode(
            (String, Int64, ByteBuffer, Bool, ByteBuffer).self
        ) {
            let version = SealedVersion(
                vector: try Self.vector(from: vector), isDeleted: deleted, payload: Array(buffer: blob)
            )
            versions[ItemID(id), default: []].append(PendingVersion(version: version, sequence: sequence, isNew: false))
        }
        return versions
    }

    /// Writes the plan: drops stored versions that were replaced, moves each item to its latest
    /// sequence, inserts the new versions at the sequence of the write that made them.
    private func write(
        _ plan: BatchMerge.Plan<ItemID, PendingVersion>, stored: [ItemID: [PendingVersion]],
        of batch: UploadBatch, on connection: PostgresConnection
    ) async throws {
        var replacedIDs: [String] = [], replacedSequences: [Int64] = []
        var newIDs: [String] = [], newSequences: [Int64] = []
        var vectors: [ByteBuffer] = [], deletedFlags: [Bool] = [], blobs: [ByteBuffer] = []
        for id in plan.order {
            let kept = plan.writes[id]!.siblings
            let keptSequences = Set(kept.lazy.filter { !$0.isNew }.map(\.sequence))
            for old in stored[id] ?? [] where !keptSequences.contains(old.sequence) {
                replacedIDs.append(id.rawValue)
                replacedSequences.append(old.sequence)
            }
            for version in kept where version.isNew {
                guard let sequence = plan.answer.results[Int(version.sequence)].sequence else { continue }
                newIDs.append(id.rawValue)
                newSequences.append(Int64(sequence))
                vectors.append(ByteBuffer(bytes: version.version.vector.canonicalEncoding))
                deletedFlags.append(version.version.isDeleted)
                blobs.append(ByteBuffer(bytes: version.version.payload))
            }
        }
        let latestIDs = plan.order.map(\.rawValue)
        let latestSequences = plan.order.map { Int64(plan.writes[$0]!.sequence) }
        let account = batch.account.rawValue
        if !replacedIDs.isEmpty {
            try await connection.query(
                """
                DELETE FROM item_versions
                WHERE account_id = \(account) AND zone = \(batch.zone.rawValue)
                  AND (item_id, sequence) IN (SELECT * FROM unnest(\(replacedIDs)::text[], \(replacedSequences)::bigint[]))
                """,
                logger: logger
            )
        }
        try await connection.query(
            """
            INSERT INTO items (account_id, zone, item_id, sequence)
            SELECT \(account), \(batch.zone.rawValue), id, sequence
            FROM unnest(\(latestIDs)::text[], \(latestSequences)::bigint[]) AS changed(id, sequence)
            ON CONFLICT (account_id, zone, item_id) DO UPDATE SET sequence = EXCLUDED.sequence
            """,
            logger: logger
        )
        try await connection.query(
            """
            INSERT INTO item_versions (account_id, zone, item_id, sequence, vector, deleted, blob)
            SELECT \(account), \(batch.zone.rawValue), *
            FROM unnest(\(newIDs)::text[], \(newSequences)::bigint[], \(vectors)::bytea[], \(deletedFlags)::boolean[],
                        \(blobs)::bytea[])
            """,
            logger: logger
        )
    }

    static func vector(from buffer: ByteBuffer) throws -> VersionVector {
        do {
            return try VersionVector(canonicalEncoding: buffer.readableBytesView)
        } catch {
            throw SyncServerError(.storageFailure, "the database holds an invalid version vector", underlying: error)
        }
    }
}

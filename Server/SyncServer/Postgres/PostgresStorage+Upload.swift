import Foundation
import PostgresNIO
import SyncCore

extension PostgresStorage {
    /// A version during a batch merge: stored already, or new in this batch.
    struct PendingVersion: Versioned {
        var version: StoredVersion
        var sequence: Int64
        var isNew: Bool

        var vector: VersionVector { version.vector }
    }

    /// One transaction: lock the account's counter row (batches of one account serialize here),
    /// read the batch's items' siblings FOR UPDATE, merge in memory with `ServerMerge.merge`, then
    /// write the differences with array-bound bulk statements and NOTIFY the other processes (a
    /// NOTIFY is delivered only if the transaction commits).
    package func upload(_ batch: UploadBatch, limits: UploadLimits, now: Date) async throws -> UploadReceipt {
        try await attempt("store an upload") {
            try await client.inTransaction(logger: logger) { connection in
                var (lastSequence, itemCount, horizon) = try await lockAccount(batch.account, zone: batch.zone, on: connection)
                guard Int64(clamping: batch.cursor) >= horizon else {
                    throw SyncServerError(.cursorExpired, "the batch was made at a cursor below the zone's horizon")
                }
                let stored = try await storedVersions(
                    of: Array(Set(batch.items.map(\.id))), in: batch, on: connection
                )
                var siblings = stored
                var latest: [String: Int64] = [:]
                var results: [UploadReceipt.ItemResult] = []
                results.reserveCapacity(batch.items.count)
                for item in batch.items {
                    let current = siblings[item.id] ?? []
                    let incoming = PendingVersion(version: item.version, sequence: lastSequence + 1, isNew: true)
                    let merge = ServerMerge.merge(incoming, into: current, maximumSiblings: limits.maximumSiblings)
                    switch merge.outcome {
                    case .stale:
                        results.append(.init(id: item.id, outcome: .stale, sequence: nil))
                        continue
                    case .tooManySiblings:
                        throw SyncServerError(.tooManySiblings, "an item would have too many concurrent versions")
                    case .applied, .conflictKept:
                        break
                    }
                    if current.isEmpty {
                        itemCount += 1
                        guard itemCount <= limits.maximumItemsPerAccount else {
                            throw SyncServerError(.quotaExceeded, "the account has the most items allowed")
                        }
                    }
                    lastSequence += 1
                    siblings[item.id] = merge.siblings
                    latest[item.id] = lastSequence
                    results.append(.init(id: item.id, outcome: merge.outcome, sequence: UInt64(lastSequence)))
                }
                if !latest.isEmpty {
                    try await write(
                        latest: latest, siblings: siblings, stored: stored, of: batch, on: connection
                    )
                    try await connection.query(
                        """
                        UPDATE account_sequences SET last_sequence = \(lastSequence), item_count = \(itemCount)
                        WHERE account_id = \(batch.account.rawValue)
                        """,
                        logger: logger
                    )
                    let change = AccountChange(account: batch.account, zone: batch.zone, sequence: UInt64(lastSequence))
                    try await connection.query(
                        "SELECT pg_notify(\(PostgresChangeNotification.channel), \(PostgresChangeNotification.payload(for: change)))",
                        logger: logger
                    )
                }
                return UploadReceipt(results: results, latestSequence: UInt64(lastSequence))
            }
        }
    }

    /// Locks the account's counter row (see ``lockAccount(_:on:)``) and reads the zone's horizon,
    /// which cannot move while the lock is held (collection takes the same lock).
    private func lockAccount(_ account: AccountID, zone: String, on connection: PostgresConnection) async throws -> (
        lastSequence: Int64, itemCount: Int64, horizon: Int64
    ) {
        let rows = try await connection.rows(
            """
            SELECT s.last_sequence, s.item_count, coalesce(h.horizon, 0)
            FROM account_sequences s
            LEFT JOIN zone_horizons h ON h.account_id = s.account_id AND h.zone = \(zone)
            WHERE s.account_id = \(account.rawValue)
            FOR UPDATE OF s
            """,
            logger: logger
        ).decode((Int64, Int64, Int64).self).all()
        guard let row = rows.first else { throw SyncServerError(.notFound, "no such account") }
        return (row.0, row.1, row.2)
    }

    /// The current versions of `ids` in the batch's zone, locked until the transaction ends.
    private func storedVersions(
        of ids: [String], in batch: UploadBatch, on connection: PostgresConnection
    ) async throws -> [String: [PendingVersion]] {
        let rows = try await connection.query(
            """
            SELECT ids.id, v.sequence, v.vector, v.deleted, v.blob
            FROM unnest(\(ids)::text[]) AS ids(id)
            CROSS JOIN LATERAL (
                -- One primary-key probe per item, whatever the table statistics say.
                SELECT sequence, vector, deleted, blob FROM item_versions
                WHERE account_id = \(batch.account.rawValue) AND zone = \(batch.zone) AND item_id = ids.id
                FOR UPDATE
            ) AS v
            ORDER BY ids.id, v.sequence
            """,
            logger: logger
        )
        var versions: [String: [PendingVersion]] = [:]
        for try await (id, sequence, vector, deleted, blob) in rows.decode(
            (String, Int64, ByteBuffer, Bool, ByteBuffer).self
        ) {
            let version = StoredVersion(
                vector: try Self.vector(from: vector), deleted: deleted, blob: Array(buffer: blob)
            )
            versions[id, default: []].append(PendingVersion(version: version, sequence: sequence, isNew: false))
        }
        return versions
    }

    /// Writes the merged state of the items in `latest`: drops stored versions that were replaced,
    /// moves each item to its latest sequence, inserts the new versions.
    private func write(
        latest: [String: Int64], siblings: [String: [PendingVersion]], stored: [String: [PendingVersion]],
        of batch: UploadBatch, on connection: PostgresConnection
    ) async throws {
        var replacedIDs: [String] = [], replacedSequences: [Int64] = []
        var newIDs: [String] = [], newSequences: [Int64] = []
        var vectors: [ByteBuffer] = [], deletedFlags: [Bool] = [], blobs: [ByteBuffer] = []
        for (id, _) in latest {
            let kept = siblings[id] ?? []
            let keptSequences = Set(kept.lazy.filter { !$0.isNew }.map(\.sequence))
            for old in stored[id] ?? [] where !keptSequences.contains(old.sequence) {
                replacedIDs.append(id)
                replacedSequences.append(old.sequence)
            }
            for version in kept where version.isNew {
                newIDs.append(id)
                newSequences.append(version.sequence)
                vectors.append(ByteBuffer(bytes: version.version.vector.canonicalEncoding))
                deletedFlags.append(version.version.deleted)
                blobs.append(ByteBuffer(bytes: version.version.blob))
            }
        }
        let account = batch.account.rawValue
        if !replacedIDs.isEmpty {
            try await connection.query(
                """
                DELETE FROM item_versions
                WHERE account_id = \(account) AND zone = \(batch.zone)
                  AND (item_id, sequence) IN (SELECT * FROM unnest(\(replacedIDs)::text[], \(replacedSequences)::bigint[]))
                """,
                logger: logger
            )
        }
        try await connection.query(
            """
            INSERT INTO items (account_id, zone, item_id, sequence)
            SELECT \(account), \(batch.zone), id, sequence
            FROM unnest(\(Array(latest.keys))::text[], \(Array(latest.values))::bigint[]) AS changed(id, sequence)
            ON CONFLICT (account_id, zone, item_id) DO UPDATE SET sequence = EXCLUDED.sequence
            """,
            logger: logger
        )
        try await connection.query(
            """
            INSERT INTO item_versions (account_id, zone, item_id, sequence, vector, deleted, blob)
            SELECT \(account), \(batch.zone), *
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

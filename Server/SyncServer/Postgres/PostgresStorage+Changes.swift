import Foundation
import PostgresNIO
import SyncCore

extension PostgresStorage {
    /// A device's pull is one transaction: its `mustResync` mark (a full resync from 0 clears it),
    /// the page, and only once the page is read the acknowledgement of `after` (decision 0102).
    /// Without a device it only reads.
    package func changes(_ query: ChangeQuery) async throws -> ChangeFeed {
        try await attempt("read the change feed") {
            guard let device = query.device else {
                return try await client.withConnection { connection in try await feed(query, on: connection) }
            }
            return try await client.inTransaction(logger: logger) { connection in
                let state = try await deviceZoneState(device, of: query.account, zone: query.zone, on: connection)
                let feed = try await feed(query, mustResync: state?.mustResync == true, on: connection) {
                    try await resyncStarted(device, of: query.account, zone: query.zone, on: connection)
                }
                if case .page = feed {
                    try await recordDeviceZoneState(
                        device, of: query.account, zone: query.zone, acknowledged: query.after, now: query.now, on: connection)
                }
                return feed
            }
        }
    }

    /// One statement, so one snapshot: the zone's horizon, the account's latest sequence and a page
    /// that walks the `items_change_feed` index on (account, zone, sequence), so its cost depends
    /// on the page, not on the account's size. The byte budget is applied in the statement (a
    /// running sum of the items' blob bytes), so versions past it are never sent.
    /// ``FeedRule`` decides what is served; `startingResync` runs when the pull clears the
    /// device's `mustResync` mark, in the caller's transaction.
    private func feed(
        _ query: ChangeQuery, mustResync: Bool = false, on connection: PostgresConnection, startingResync: () async throws -> Void = {}
    ) async throws -> ChangeFeed {
        let limit = max(1, query.limit)
        let account = query.account.rawValue
        let rows = try await connection.rows(
            """
            WITH page AS (
                SELECT item_id, sequence FROM items
                WHERE account_id = \(account) AND zone = \(query.zone.rawValue) AND sequence > \(Int64(clamping: query.after))
                ORDER BY sequence
                LIMIT \(limit + 1)
            ),
            sized AS (
                SELECT page.item_id, page.sequence,
                       sum(size.bytes) OVER (ORDER BY page.sequence ROWS UNBOUNDED PRECEDING) - size.bytes AS before
                FROM page CROSS JOIN LATERAL (
                    SELECT coalesce(sum(octet_length(blob)), 0)::bigint AS bytes FROM item_versions
                    WHERE account_id = \(account) AND zone = \(query.zone.rawValue) AND item_id = page.item_id
                ) AS size
            ),
            kept AS (
                SELECT item_id, sequence FROM sized WHERE before < \(Int64(clamping: query.maximumBytes))
            ),
            meta AS (
                SELECT coalesce((SELECT horizon FROM zone_horizons
                                 WHERE account_id = \(account) AND zone = \(query.zone.rawValue)), 0) AS horizon,
                       (SELECT collected_at FROM zone_horizons
                        WHERE account_id = \(account) AND zone = \(query.zone.rawValue)) AS collected_at,
                       (SELECT forgotten_at FROM zone_horizons
                        WHERE account_id = \(account) AND zone = \(query.zone.rawValue)) AS forgotten_at,
                       coalesce((SELECT last_sequence FROM account_sequences
                                 WHERE account_id = \(account)), 0) AS latest,
                       (SELECT restored_through FROM account_sequences WHERE account_id = \(account)) AS restored,
                       (SELECT count(*) FROM sized) > (SELECT count(*) FROM kept) AS cut
            )
            SELECT meta.horizon, meta.collected_at, meta.forgotten_at, meta.latest, meta.restored, meta.cut, versions.item_id, versions.sequence, versions.vector,
                   versions.deleted, versions.blob
            FROM meta LEFT JOIN (
                -- LATERAL: one primary-key probe per page item, whatever the table statistics say.
                SELECT kept.item_id, kept.sequence, v.sequence AS version_sequence, v.vector, v.deleted, v.blob
                FROM kept CROSS JOIN LATERAL (
                    SELECT sequence, vector, deleted, blob FROM item_versions
                    WHERE account_id = \(account) AND zone = \(query.zone.rawValue) AND item_id = kept.item_id
                ) AS v
            ) AS versions ON true
            ORDER BY versions.sequence, versions.version_sequence
            """,
            logger: logger
        )
        var horizon: Int64 = 0, latest: Int64 = 0, restoredThrough: Int64?, cut = false
        var collectedAt: Date?, forgottenAt: Date?
        var items: [ChangedItem<SealedVersion>] = []
        for try await (zoneHorizon, zoneCollectedAt, zoneForgottenAt, accountLatest, accountRestored, pageCut, id, sequence, vector, deleted, blob)
            in rows.decode((Int64, Date?, Date?, Int64, Int64?, Bool, String?, Int64?, ByteBuffer?, Bool?, ByteBuffer?).self)
        {
            horizon = zoneHorizon
            collectedAt = zoneCollectedAt
            forgottenAt = zoneForgottenAt
            latest = accountLatest
            restoredThrough = accountRestored
            cut = pageCut
            guard let id, let sequence, let vector, let deleted, let blob else { continue }
            let version = SealedVersion(vector: try Self.vector(from: vector), isDeleted: deleted, payload: Array(buffer: blob))
            if items.last?.item.rawValue == id {
                items[items.count - 1].versions.append(version)
            } else {
                items.append(ChangedItem(item: ItemID(id), sequence: UInt64(sequence), versions: [version]))
            }
        }
        let admission = FeedRule.admission(
            after: query.after, told: query.told, fullResync: query.fullResync, mustResync: mustResync, horizon: UInt64(horizon),
            restoredThrough: restoredThrough.flatMap { $0 >= 0 ? UInt64($0) : nil })
        if let refusal = ChangeFeed.refusal(admission, horizon: UInt64(horizon)) { return refusal }
        if admission == .serve(startsResync: true) { try await startingResync() }
        var hasMore = items.count > limit || cut
        if items.count > limit { items.removeLast() }
        let listsCollected = FeedRule.listsCollectedDeletions(fullResync: query.fullResync, asked: query.includesCollectedDeletions)
        if listsCollected {
            let collected = try await collectedDeletions(query, limit: limit + 1, on: connection)
            (items, hasMore) = FeedRule.page(
                merging: items, hasMore: hasMore, with: collected, limit: limit, maximumBytes: query.maximumBytes)
        }
        collectedAt = FeedRule.collectionTime(listsCollectedDeletions: listsCollected, collectedAt: collectedAt, forgottenAt: forgottenAt)
        // The last page moves the cursor to the account's latest sequence (one snapshot: every
        // change up to it is either in this page or older than the query's cursor).
        let cursor = FeedRule.cursor(
            after: query.after, lastItem: items.last?.sequence, hasMore: hasMore, latest: max(UInt64(latest), items.last?.sequence ?? 0))
        return .page(ChangePage(items: items, cursor: cursor, hasMore: hasMore, deletionsCollectedAt: collectedAt))
    }

    /// Drops the oldest collected deletions past the zone's bound (rule R10a), noting when it did.
    private func dropOldestCollectedDeletions(account: UUID, zone: String, now: Date, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            WITH dropped AS (
                DELETE FROM collected_deletions WHERE account_id = \(account) AND zone = \(zone) AND item_sequence <= (
                    SELECT item_sequence FROM (SELECT DISTINCT item_sequence FROM collected_deletions
                                               WHERE account_id = \(account) AND zone = \(zone)) AS kept
                    ORDER BY item_sequence DESC LIMIT 1 OFFSET \(FeedRule.maximumCollectedDeletions))
                RETURNING 1
            )
            UPDATE zone_horizons SET forgotten_at = \(now)
            WHERE account_id = \(account) AND zone = \(zone) AND EXISTS (SELECT 1 FROM dropped)
            """,
            logger: logger)
    }

    /// The collected deletions of items the zone no longer holds, after `after`: at most `limit`
    /// items, in sequence order (rule R10a).
    private func collectedDeletions(
        _ query: ChangeQuery, limit: Int, on connection: PostgresConnection
    ) async throws -> [ChangedItem<SealedVersion>] {
        let account = query.account.rawValue
        let rows = try await connection.rows(
            """
            WITH page AS (
                SELECT DISTINCT c.item_id, c.item_sequence FROM collected_deletions c
                WHERE c.account_id = \(account) AND c.zone = \(query.zone.rawValue) AND c.item_sequence > \(Int64(clamping: query.after))
                  AND NOT EXISTS (SELECT 1 FROM items i
                                  WHERE i.account_id = c.account_id AND i.zone = c.zone AND i.item_id = c.item_id)
                ORDER BY c.item_sequence
                LIMIT \(limit)
            )
            SELECT c.item_id, c.item_sequence, c.vector, c.deleted, c.blob
            FROM page JOIN collected_deletions c
              ON c.account_id = \(account) AND c.zone = \(query.zone.rawValue) AND c.item_id = page.item_id
            ORDER BY c.item_sequence, c.sequence
            """,
            logger: logger)
        var items: [ChangedItem<SealedVersion>] = []
        for try await (id, sequence, vector, deleted, blob) in rows.decode((String, Int64, ByteBuffer, Bool, ByteBuffer).self) {
            let version = SealedVersion(vector: try Self.vector(from: vector), isDeleted: deleted, payload: Array(buffer: blob))
            if items.last?.item.rawValue == id {
                items[items.count - 1].versions.append(version)
            } else {
                items.append(ChangedItem(item: ItemID(id), sequence: UInt64(sequence), versions: [version]))
            }
        }
        return items
    }

    /// An acknowledgement never moves backwards and never past the account's latest sequence; one
    /// for a device the account does not have records nothing.
    package func acknowledge(
        device: DeviceID, of account: AccountID, zone: ZoneID, through sequence: UInt64, now: Date
    ) async throws {
        try await attempt("record an acknowledgement") {
            try await client.withConnection { connection in
                try await recordDeviceZoneState(device, of: account, zone: zone, acknowledged: sequence, now: now, on: connection)
            }
        }
    }

    /// One transaction over every account with tombstones: their counter rows are locked first, in
    /// account order (the lock uploads take first), so collection never deadlocks with an upload
    /// and never drops a tombstone an upload is merging against.
    package func collectGarbage(activeSince: Date?, now: Date) async throws -> Int {
        try await attempt("collect tombstones") {
            try await client.inTransaction(logger: logger) { connection in
                _ = try await connection.rows(
                    """
                    SELECT account_id FROM account_sequences
                    WHERE account_id IN (SELECT DISTINCT account_id FROM item_versions WHERE deleted)
                    ORDER BY account_id
                    FOR UPDATE
                    """,
                    logger: logger
                ).collect()
                let collected = try await connection.rows(
                    """
                    WITH dropped AS (
                        DELETE FROM items i
                        WHERE i.account_id IN (SELECT DISTINCT account_id FROM item_versions WHERE deleted)
                          AND NOT EXISTS (
                            SELECT 1 FROM item_versions v
                            WHERE v.account_id = i.account_id AND v.zone = i.zone AND v.item_id = i.item_id
                              AND NOT v.deleted)
                          -- An account without active devices keeps its tombstones.
                          AND EXISTS (
                            SELECT 1 FROM devices d
                            WHERE d.account_id = i.account_id AND d.revoked_at IS NULL
                              AND (\(activeSince)::timestamptz IS NULL OR d.last_seen_at >= \(activeSince)))
                          AND NOT EXISTS (
                            SELECT 1 FROM devices d
                            LEFT JOIN acknowledgements a
                              ON a.account_id = d.account_id AND a.device_id = d.device_id AND a.zone = i.zone
                            WHERE d.account_id = i.account_id AND d.revoked_at IS NULL
                              AND (\(activeSince)::timestamptz IS NULL OR d.last_seen_at >= \(activeSince))
                              AND coalesce(a.sequence, 0) < i.sequence)
                        RETURNING i.account_id, i.zone, i.item_id, i.sequence
                    ),
                    versions AS (
                        DELETE FROM item_versions v USING dropped d
                        WHERE v.account_id = d.account_id AND v.zone = d.zone AND v.item_id = d.item_id
                        RETURNING v.account_id, v.zone, v.item_id, d.sequence AS item_sequence, v.sequence, v.vector, v.deleted, v.blob,
                                  octet_length(v.blob) AS bytes
                    ),
                    -- Each collected tombstone stays as its item's collected deletion (rule R10a),
                    -- replacing the one kept before (the statement's snapshot: the delete does not
                    -- see the rows the insert adds).
                    replaced AS (
                        DELETE FROM collected_deletions c USING dropped d
                        WHERE c.account_id = d.account_id AND c.zone = d.zone AND c.item_id = d.item_id
                    ),
                    kept AS (
                        INSERT INTO collected_deletions (account_id, zone, item_id, item_sequence, sequence, vector, deleted, blob)
                        SELECT account_id, zone, item_id, item_sequence, sequence, vector, deleted, blob FROM versions
                    ),
                    horizons AS (
                        INSERT INTO zone_horizons (account_id, zone, horizon, collected_at)
                        SELECT account_id, zone, max(sequence), \(now) FROM dropped GROUP BY account_id, zone
                        ON CONFLICT (account_id, zone)
                            DO UPDATE SET horizon = greatest(zone_horizons.horizon, EXCLUDED.horizon),
                                          collected_at = EXCLUDED.collected_at
                    ),
                    counts AS (
                        UPDATE account_sequences s
                        SET item_count = s.item_count - d.dropped, stored_bytes = s.stored_bytes - coalesce(b.bytes, 0)
                        FROM (SELECT account_id, count(*) AS dropped FROM dropped GROUP BY account_id) d
                        LEFT JOIN (SELECT account_id, sum(bytes)::bigint AS bytes FROM versions GROUP BY account_id) b
                            USING (account_id)
                        WHERE s.account_id = d.account_id
                    )
                    SELECT d.account_id, d.zone, count(*)::bigint, greatest(max(d.sequence), coalesce(max(h.horizon), 0))
                    FROM dropped d LEFT JOIN zone_horizons h ON h.account_id = d.account_id AND h.zone = d.zone
                    GROUP BY d.account_id, d.zone
                    """,
                    logger: logger
                ).decode((UUID, String, Int64, Int64).self).all()
                for (account, zone, _, horizon) in collected {
                    try await requireResync(account: account, zone: ZoneID(zone), below: horizon, on: connection)
                    try await dropOldestCollectedDeletions(account: account, zone: zone, now: now, on: connection)
                }
                return collected.reduce(0) { $0 + Int($1.2) }
            }
        }
    }
}

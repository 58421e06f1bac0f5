import Foundation
import GRDB
import SyncCore

extension SQLiteStorage {
    /// A device's pull: the `mustResync` and horizon checks and the page in one read (readers run
    /// beside the writer), then, only for a served page, the acknowledgement of `after` (decision
    /// 0102). A device marked `mustResync` goes through one write transaction instead, so that a
    /// full resync from 0 clears the mark atomically with the page it is served: a collection
    /// between them would otherwise be forgotten. Without a device it only reads.
    package func changes(_ query: ChangeQuery) async throws -> ChangeFeed {
        guard let device = query.device else {
            return try await read("reading changes") { db in try Self.feed(query, in: db) }
        }
        let account = query.account.description
        let served: (feed: ChangeFeed, latest: Int64)? = try await read("reading changes") { db in
            let state = try DeviceZoneState.fetch(account: account, device: device, zone: query.zone, in: db)
            guard state?.mustResync != true else { return nil }
            return (try Self.feed(query, in: db), try Self.latestSequence(account: account, in: db))
        }
        if let served {
            if case .page = served.feed {
                try await write("recording an acknowledgement") { db in
                    try DeviceZoneState.record(
                        account: account, device: device, zone: query.zone, acknowledged: min(query.after, UInt64(served.latest)),
                        now: query.now, in: db)
                }
            }
            return served.feed
        }
        return try await write("reading changes") { db in
            let state = try DeviceZoneState.fetch(account: account, device: device, zone: query.zone, in: db)
            let feed = try Self.feed(query, mustResync: state?.mustResync == true, in: db) {
                try DeviceZoneState.resyncStarted(account: account, device: device, zone: query.zone, in: db)
            }
            if case .page = feed {
                try DeviceZoneState.record(
                    account: account, device: device, zone: query.zone,
                    acknowledged: min(query.after, UInt64(try Self.latestSequence(account: account, in: db))),
                    now: query.now, in: db)
            }
            return feed
        }
    }

    /// One page of the feed: arguments account, zone, after, limit.
    private static let page = """
        SELECT id, sequence, versions, bytes FROM item
        WHERE account = ?1 AND zone = ?2 AND sequence > ?3 ORDER BY sequence LIMIT ?4
        """

    /// One page of a full resync that lists the collected deletions of items the zone no longer
    /// holds too, each at its sequence (rule R10a); the same arguments.
    private static let pageWithCollectedDeletions = """
        SELECT id, sequence, versions, bytes FROM item
        WHERE account = ?1 AND zone = ?2 AND sequence > ?3
        UNION ALL
        SELECT c.id, c.sequence, c.versions, c.bytes FROM collected_deletion c
        WHERE c.account = ?1 AND c.zone = ?2 AND c.sequence > ?3
            AND NOT EXISTS (SELECT 1 FROM item i WHERE i.account = c.account AND i.zone = c.zone AND i.id = c.id)
        ORDER BY sequence LIMIT ?4
        """

    private static func horizon(account: String, zone: ZoneID, in db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT horizon FROM zone WHERE account = ? AND name = ?", arguments: [account, zone.rawValue]) ?? 0
    }

    /// The zone's horizon, when its tombstones were last collected and when it last forgot one
    /// without evidence (nil: never), in one read.
    private static func collection(
        account: String, zone: ZoneID, in db: Database
    ) throws -> (horizon: Int64, collectedAt: Date?, forgottenAt: Date?) {
        let row = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT horizon, collectedAt, forgottenAt FROM zone WHERE account = ? AND name = ?"),
            arguments: [account, zone.rawValue])
        return (
            row?["horizon"] ?? 0, (row?["collectedAt"] as Double?).map { Date(timeIntervalSince1970: $0) },
            (row?["forgottenAt"] as Double?).map { Date(timeIntervalSince1970: $0) }
        )
    }

    private static func latestSequence(account: String, in db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT latestSequence FROM account WHERE id = ?", arguments: [account]) ?? 0
    }

    /// The feed rule's admission and one page (``FeedRule``); `startingResync` runs when the
    /// pull clears the device's `mustResync` mark, in the same transaction.
    private static func feed(
        _ query: ChangeQuery, mustResync: Bool = false, in db: Database, startingResync: () throws -> Void = {}
    ) throws -> ChangeFeed {
        let account = query.account.description
        let (horizon, lastCollection, forgottenAt) = try collection(account: account, zone: query.zone, in: db)
        let restoredThrough = try Int64.fetchOne(db, sql: "SELECT restoredThrough FROM account WHERE id = ?", arguments: [account])
        let admission = FeedRule.admission(
            after: query.after, told: query.told, fullResync: query.fullResync, mustResync: mustResync, horizon: UInt64(horizon),
            restoredThrough: restoredThrough.flatMap { $0 >= 0 ? UInt64($0) : nil })
        if let refusal = ChangeFeed.refusal(admission, horizon: UInt64(horizon)) { return refusal }
        if admission == .serve(startsResync: true) { try startingResync() }
        let limit = max(1, query.limit)
        // A cursor, so an item past the page's item limit or byte budget is never read into memory.
        let listsCollected = FeedRule.listsCollectedDeletions(fullResync: query.fullResync, asked: query.includesCollectedDeletions)
        let collectedAt = FeedRule.collectionTime(listsCollectedDeletions: listsCollected, collectedAt: lastCollection, forgottenAt: forgottenAt)
        let rows = try Row.fetchCursor(
            db.cachedStatement(sql: listsCollected ? Self.pageWithCollectedDeletions : Self.page),
            arguments: [account, query.zone.rawValue, Int64(clamping: query.after), limit + 1])
        var items: [ChangedItem<SealedVersion>] = []
        var bytes = 0
        var hasMore = false
        while let row = try rows.next() {
            guard items.count < limit, bytes < query.maximumBytes else {
                hasMore = true
                break
            }
            items.append(ChangedItem(
                item: ItemID(row["id"]), sequence: UInt64(row["sequence"] as Int64), versions: try SealedVersion.decode(row["versions"] as Data)))
            bytes += row["bytes"] as Int
        }
        let latest = try latestSequence(account: account, in: db)
        let cursor = FeedRule.cursor(after: query.after, lastItem: items.last?.sequence, hasMore: hasMore, latest: UInt64(latest))
        return .page(ChangePage(items: items, cursor: cursor, hasMore: hasMore, deletionsCollectedAt: collectedAt))
    }

    /// Keeps the tombstones about to be collected (through sequence `floor`) as their items'
    /// collected deletions, replacing earlier ones, and drops the oldest past the zone's bound
    /// (rule R10a), noting when it did.
    private static func keepCollectedDeletions(
        account: String, zone: ZoneID, through floor: Int64, bound: Int, now: Date, in db: Database
    ) throws {
        try db.execute(
            sql: """
                INSERT INTO collected_deletion (account, zone, id, sequence, versions, bytes)
                SELECT account, zone, id, sequence, versions, bytes FROM item
                WHERE account = ? AND zone = ? AND tombstone = 1 AND sequence <= ?
                ON CONFLICT (account, zone, id) DO UPDATE SET sequence = excluded.sequence, versions = excluded.versions, bytes = excluded.bytes
                """,
            arguments: [account, zone.rawValue, floor])
        try db.execute(
            sql: """
                DELETE FROM collected_deletion WHERE account = ?1 AND zone = ?2 AND sequence <= (
                    SELECT sequence FROM collected_deletion WHERE account = ?1 AND zone = ?2 ORDER BY sequence DESC LIMIT 1 OFFSET ?3)
                """,
            arguments: [account, zone.rawValue, bound])
        if db.changesCount > 0 {
            try db.execute(
                sql: """
                    INSERT INTO zone (account, name, forgottenAt) VALUES (?, ?, ?)
                    ON CONFLICT (account, name) DO UPDATE SET forgottenAt = excluded.forgottenAt
                    """,
                arguments: [account, zone.rawValue, now.timeIntervalSince1970])
        }
    }

    package func acknowledge(
        device: DeviceID, of account: AccountID, zone: ZoneID, through sequence: UInt64, now: Date
    ) async throws {
        try await write("recording an acknowledgement") { db in
            let latest = try Self.latestSequence(account: account.description, in: db)
            try DeviceZoneState.record(
                account: account.description, device: device, zone: zone,
                acknowledged: min(sequence, UInt64(latest)), now: now, in: db)
        }
    }

    package func collectGarbage(activeSince: Date?, now: Date) async throws -> Int {
        let bound = collectedDeletionBound
        return try await write("collecting tombstones") { db in
            let zones = try Row.fetchAll(db, sql: "SELECT DISTINCT account, zone FROM item WHERE tombstone = 1")
            var dropped = 0
            for zone in zones {
                let account: String = zone["account"]
                let name = ZoneID(zone["zone"])
                // The lowest acknowledgement among the devices that hold tombstones back; with no
                // active device, nothing is collected.
                guard let floor = try Int64.fetchOne(
                    db,
                    sql: """
                        SELECT MIN(COALESCE(a.sequence, 0)) FROM device d
                        LEFT JOIN acknowledgement a ON a.account = d.account AND a.device = d.id AND a.zone = ?
                        WHERE d.account = ? AND d.revokedAt IS NULL AND (? IS NULL OR d.lastSeenAt >= ?)
                        """,
                    arguments: [name.rawValue, account, activeSince?.timeIntervalSince1970, activeSince?.timeIntervalSince1970]
                ) else { continue }
                let collected = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT COUNT(*) AS count, MAX(sequence) AS newest, COALESCE(SUM(bytes), 0) AS bytes FROM item
                        WHERE account = ? AND zone = ? AND tombstone = 1 AND sequence <= ?
                        """,
                    arguments: [account, name.rawValue, floor])
                let count: Int = collected?["count"] ?? 0
                guard count > 0, let newest: Int64 = collected?["newest"] else { continue }
                try Self.keepCollectedDeletions(account: account, zone: name, through: floor, bound: bound, now: now, in: db)
                try db.execute(
                    sql: "DELETE FROM item WHERE account = ? AND zone = ? AND tombstone = 1 AND sequence <= ?",
                    arguments: [account, name.rawValue, floor])
                try db.execute(
                    sql: """
                        INSERT INTO zone (account, name, horizon, collectedAt) VALUES (?, ?, ?, ?)
                        ON CONFLICT (account, name) DO UPDATE SET horizon = max(horizon, excluded.horizon), collectedAt = excluded.collectedAt
                        """,
                    arguments: [account, name.rawValue, newest, now.timeIntervalSince1970])
                let bytes: Int64 = collected?["bytes"] ?? 0
                try db.execute(
                    sql: "UPDATE account SET itemCount = itemCount - ?, storedBytes = storedBytes - ? WHERE id = ?",
                    arguments: [count, bytes, account])
                try DeviceZoneState.requireResync(
                    account: account, zone: name, below: try Self.horizon(account: account, zone: name, in: db), in: db)
                dropped += count
            }
            return dropped
        }
    }
}

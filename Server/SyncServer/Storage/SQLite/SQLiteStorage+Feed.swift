import Foundation
import GRDB
import SyncCore

extension SQLiteStorage {
    package func changes(_ query: ChangeQuery) async throws -> ChangeFeed {
        try await read("reading changes") { db in
            let account = query.account.description
            let horizon = try Int64.fetchOne(
                db, sql: "SELECT horizon FROM zone WHERE account = ? AND name = ?", arguments: [account, query.zone]) ?? 0
            if !query.fullResync && Int64(clamping: query.after) < horizon {
                return .cursorExpired(horizon: UInt64(horizon))
            }
            let limit = max(1, query.limit)
            let rows = try Row.fetchAll(
                db.cachedStatement(sql: """
                    SELECT id, sequence, versions FROM item
                    WHERE account = ? AND zone = ? AND sequence > ? ORDER BY sequence LIMIT ?
                    """),
                arguments: [account, query.zone, Int64(clamping: query.after), limit + 1])
            let items = try rows.prefix(limit).map { row in
                ItemState(id: row["id"], sequence: UInt64(row["sequence"] as Int64), versions: try StoredVersion.decode(row["versions"] as Data))
            }
            let hasMore = rows.count > limit
            let latest = try Int64.fetchOne(db, sql: "SELECT latestSequence FROM account WHERE id = ?", arguments: [account]) ?? 0
            let cursor = hasMore ? items.last!.sequence : max(query.after, UInt64(latest))
            return .page(ChangePage(items: items, cursor: cursor, hasMore: hasMore))
        }
    }

    package func acknowledge(
        device: DeviceID, of account: AccountID, zone: String, through sequence: UInt64, now: Date
    ) async throws {
        try await write("recording an acknowledgement") { db in
            let latest = try Int64.fetchOne(
                db, sql: "SELECT latestSequence FROM account WHERE id = ?", arguments: [account.description]) ?? 0
            let position = min(Int64(clamping: sequence), latest)
            try db.execute(
                sql: """
                    INSERT INTO acknowledgement (account, device, zone, sequence) VALUES (?, ?, ?, ?)
                    ON CONFLICT (account, device, zone) DO UPDATE SET sequence = max(sequence, excluded.sequence)
                    """,
                arguments: [account.description, device.rawValue, zone, position])
            try db.execute(
                sql: "UPDATE device SET lastSeenAt = max(lastSeenAt, ?) WHERE account = ? AND id = ?",
                arguments: [now.timeIntervalSince1970, account.description, device.rawValue])
        }
    }

    package func collectGarbage(activeSince: Date?) async throws -> Int {
        try await write("collecting tombstones") { db in
            let zones = try Row.fetchAll(db, sql: "SELECT DISTINCT account, zone FROM item WHERE tombstone = 1")
            var dropped = 0
            for zone in zones {
                let account: String = zone["account"]
                let name: String = zone["zone"]
                // The lowest acknowledgement among the devices that hold tombstones back; with no
                // active device, nothing is collected.
                guard let floor = try Int64.fetchOne(
                    db,
                    sql: """
                        SELECT MIN(COALESCE(a.sequence, 0)) FROM device d
                        LEFT JOIN acknowledgement a ON a.account = d.account AND a.device = d.id AND a.zone = ?
                        WHERE d.account = ? AND d.revokedAt IS NULL AND (? IS NULL OR d.lastSeenAt >= ?)
                        """,
                    arguments: [name, account, activeSince?.timeIntervalSince1970, activeSince?.timeIntervalSince1970]
                ) else { continue }
                let collected = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT COUNT(*) AS count, MAX(sequence) AS newest FROM item
                        WHERE account = ? AND zone = ? AND tombstone = 1 AND sequence <= ?
                        """,
                    arguments: [account, name, floor])
                let count: Int = collected?["count"] ?? 0
                guard count > 0, let newest: Int64 = collected?["newest"] else { continue }
                try db.execute(
                    sql: "DELETE FROM item WHERE account = ? AND zone = ? AND tombstone = 1 AND sequence <= ?",
                    arguments: [account, name, floor])
                try db.execute(
                    sql: """
                        INSERT INTO zone (account, name, horizon) VALUES (?, ?, ?)
                        ON CONFLICT (account, name) DO UPDATE SET horizon = max(horizon, excluded.horizon)
                        """,
                    arguments: [account, name, newest])
                try db.execute(sql: "UPDATE account SET itemCount = itemCount - ? WHERE id = ?", arguments: [count, account])
                dropped += count
            }
            return dropped
        }
    }
}

import Foundation
import PostgresNIO
import SyncCore

extension PostgresStorage {
    package func appendGroupLogEntry(_ entry: [UInt8], at index: Int, of group: String, by account: AccountID, members: Set<AccountID>, viewers: Set<AccountID>, now: Date) async throws {
        try await attempt("append to a group log") {
            try await client.inTransaction(logger: logger) { connection in
                // The group's row serializes appends, so two at one index cannot both land.
                try await connection.query(
                    "INSERT INTO groups (group_id, created_at) VALUES (\(group), \(now)) ON CONFLICT (group_id) DO NOTHING", logger: logger)
                _ = try await connection.rows("SELECT 1 FROM groups WHERE group_id = \(group) FOR UPDATE", logger: logger).decode(Int.self).all()
                let length = try await connection.rows("SELECT count(*) FROM group_log WHERE group_id = \(group)", logger: logger)
                    .decode(Int.self).all().first ?? 0
                let isMember = try await connection.rows(
                    "SELECT is_current FROM group_members WHERE group_id = \(group) AND account_id = \(account.rawValue)", logger: logger
                ).decode(Bool.self).all().first ?? false
                try GroupRules.checkAppend(at: index, length: length, appenderIsMember: isMember)
                try await connection.query(
                    """
                    INSERT INTO group_log (group_id, position, entry, created_at)
                    VALUES (\(group), \(index), \(ByteBuffer(bytes: entry)), \(now))
                    """,
                    logger: logger)
                try await connection.query(
                    "UPDATE group_members SET is_current = false, is_viewer = false WHERE group_id = \(group)", logger: logger)
                for member in members {
                    let isViewer = viewers.contains(member)
                    try await connection.query(
                        """
                        INSERT INTO group_members (group_id, account_id, is_current, is_viewer) VALUES (\(group), \(member.rawValue), true, \(isViewer))
                        ON CONFLICT (group_id, account_id) DO UPDATE SET is_current = true, is_viewer = excluded.is_viewer
                        """,
                        logger: logger)
                }
            }
        }
    }

    package func groupLog(of group: String, readBy account: AccountID, from index: Int, limit: Int) async throws -> [DeviceLogRecord] {
        try await attempt("read a group log") {
            let member = try await client.query(
                "SELECT 1 FROM group_members WHERE group_id = \(group) AND account_id = \(account.rawValue)", logger: logger
            ).decode(Int.self).all()
            guard !member.isEmpty else { throw SyncServerError(.notFound, "no such group") }
            return try await client.query(
                """
                SELECT position, entry FROM group_log WHERE group_id = \(group) AND position >= \(index)
                ORDER BY position LIMIT \(limit)
                """,
                logger: logger
            ).decode((Int, ByteBuffer).self).all().map { DeviceLogRecord(index: $0.0, entry: Array(buffer: $0.1)) }
        }
    }

    package func groups(of account: AccountID) async throws -> [GroupSummary] {
        try await attempt("list groups") {
            try await client.query(
                """
                SELECT m.group_id, (SELECT count(*) FROM group_log l WHERE l.group_id = m.group_id), m.is_viewer
                FROM group_members m WHERE m.account_id = \(account.rawValue) AND m.is_current ORDER BY m.group_id
                """,
                logger: logger
            ).decode((String, Int, Bool).self).all().map { GroupSummary(group: $0.0, entries: $0.1, isViewer: $0.2) }
        }
    }

    package func members(of group: String) async throws -> Set<AccountID> {
        try await attempt("list a group's members") {
            Set(try await client.query(
                "SELECT account_id FROM group_members WHERE group_id = \(group) AND is_current", logger: logger
            ).decode(UUID.self).all().map { AccountID($0) })
        }
    }
}

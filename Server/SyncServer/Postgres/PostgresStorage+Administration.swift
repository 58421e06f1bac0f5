import Foundation
import PostgresNIO

extension PostgresStorage {
    package func accountSummaries() async throws -> [AccountSummary] {
        try await attempt("list accounts") {
            let rows = try await client.query(
                """
                SELECT a.name, coalesce(s.item_count, 0), coalesce(s.stored_bytes, 0), a.disabled_at IS NOT NULL,
                       (SELECT count(*) FROM devices d WHERE d.account_id = a.id AND d.revoked_at IS NULL),
                       (SELECT max(last_seen_at) FROM devices d WHERE d.account_id = a.id)
                FROM accounts a LEFT JOIN account_sequences s ON s.account_id = a.id
                ORDER BY a.name
                """,
                logger: logger)
            var summaries: [AccountSummary] = []
            for try await (name, items, bytes, disabled, devices, lastSeen) in rows.decode((String, Int64, Int64, Bool, Int64, Date?).self) {
                summaries.append(AccountSummary(
                    name: name, devices: Int(devices), items: Int(items), bytes: Int(bytes), lastSeen: lastSeen, isDisabled: disabled))
            }
            return summaries
        }
    }

    package func setDisabled(_ disabled: Bool, account id: AccountID) async throws {
        // Disabling tells every server process at commit, so each closes the account's push connections.
        let payload = PostgresChangeNotification.payload(for: .disabling(id))
        let changed = try await attempt("disable an account") {
            try await client.query(
                """
                WITH changed AS (
                    UPDATE accounts SET disabled_at = CASE WHEN \(disabled) THEN coalesce(disabled_at, now()) ELSE NULL END
                    WHERE id = \(id.rawValue) RETURNING 1
                )
                SELECT CASE WHEN \(disabled) THEN pg_notify(\(PostgresChangeNotification.channel), \(payload)) END FROM changed
                """,
                logger: logger
            ).collect().count
        }
        guard changed == 1 else { throw SyncServerError(.notFound, "no such account") }
    }

    package func isDisabled(_ id: AccountID) async throws -> Bool {
        try await attempt("check an account") {
            try await client.query(
                "SELECT disabled_at IS NOT NULL FROM accounts WHERE id = \(id.rawValue)", logger: logger
            ).decode(Bool.self).all().first ?? false
        }
    }
}

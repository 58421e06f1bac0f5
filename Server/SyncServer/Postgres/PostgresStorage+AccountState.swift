import Foundation
import PostgresNIO
import SyncCore

extension PostgresStorage {
    package func appendDeviceLogEntry(_ entry: [UInt8], at index: Int, of account: AccountID, now: Date) async throws {
        try await attempt("append to the device log") {
            try await client.inTransaction(logger: logger) { connection in
                // The account's counter row serializes appends, so two at one index cannot both land.
                try await lockAccount(account, on: connection)
                let length = try await connection.rows(
                    "SELECT count(*) FROM device_log WHERE account_id = \(account.rawValue)", logger: logger
                ).decode(Int.self).all().first ?? 0
                try AccountStateRules.checkAppend(at: index, length: length)
                try await connection.query(
                    """
                    INSERT INTO device_log (account_id, position, entry, created_at)
                    VALUES (\(account.rawValue), \(index), \(ByteBuffer(bytes: entry)), \(now))
                    """,
                    logger: logger
                )
            }
        }
    }

    package func deviceLog(of account: AccountID, from index: Int, limit: Int) async throws -> [DeviceLogRecord] {
        try await attempt("read the device log") {
            try await client.query(
                """
                SELECT position, entry FROM device_log
                WHERE account_id = \(account.rawValue) AND position >= \(index)
                ORDER BY position LIMIT \(limit)
                """,
                logger: logger
            ).decode((Int, ByteBuffer).self).all().map { DeviceLogRecord(index: $0.0, entry: Array(buffer: $0.1)) }
        }
    }

    package func publishStatement(_ statement: [UInt8], zone: ZoneID, device: DeviceID, of account: AccountID, now: Date) async throws {
        _ = try await attempt("publish a statement") {
            try await client.query(
                """
                INSERT INTO zone_statements (account_id, zone, device_id, statement, published_at)
                VALUES (\(account.rawValue), \(zone.rawValue), \(device.rawValue), \(ByteBuffer(bytes: statement)), \(now))
                ON CONFLICT (account_id, zone, device_id) DO UPDATE SET
                    statement = EXCLUDED.statement, published_at = EXCLUDED.published_at
                """,
                logger: logger
            )
        }
    }

    package func statements(zone: ZoneID, of account: AccountID) async throws -> [StatementRecord] {
        try await attempt("read statements") {
            try await client.query(
                """
                SELECT device_id, statement, published_at FROM zone_statements
                WHERE account_id = \(account.rawValue) AND zone = \(zone.rawValue) ORDER BY device_id
                """,
                logger: logger
            ).decode((String, ByteBuffer, Date).self).all().map { row in
                guard let device = DeviceID(row.0) else { throw SyncServerError(.storageFailure, "corrupt statement record") }
                return StatementRecord(device: device, statement: Array(buffer: row.1), publishedAt: row.2)
            }
        }
    }

    package func publishIdentityCard(_ card: [UInt8], of account: AccountID, now: Date) async throws {
        _ = try await attempt("publish an identity card") {
            try await client.query(
                """
                INSERT INTO identity_cards (account_id, card, published_at) VALUES (\(account.rawValue), \(ByteBuffer(bytes: card)), \(now))
                ON CONFLICT (account_id) DO UPDATE SET card = EXCLUDED.card, published_at = EXCLUDED.published_at
                """,
                logger: logger
            )
        }
    }

    package func identityCard(of account: AccountID) async throws -> [UInt8]? {
        try await attempt("read an identity card") {
            try await client.query("SELECT card FROM identity_cards WHERE account_id = \(account.rawValue)", logger: logger)
                .decode(ByteBuffer.self).all().first.map { Array(buffer: $0) }
        }
    }
}

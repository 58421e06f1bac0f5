import Foundation
import PostgresNIO
import SyncCore

extension PostgresStorage {
    package func registerDevice(_ device: NewDevice, maximumDevices: Int, now: Date) async throws -> DeviceRecord {
        try await attempt("register a device") {
            try await client.inTransaction(logger: logger) { connection in
                // The account's counter row serializes registrations, so the quota check holds.
                try await lockAccount(device.account, on: connection)
                let existing = try await connection.rows(
                    """
                    SELECT revoked_at IS NOT NULL FROM devices
                    WHERE account_id = \(device.account.rawValue) AND device_id = \(device.id.rawValue)
                    """,
                    logger: logger
                ).decode(Bool.self).all()
                if existing.first == true { throw SyncServerError.revokedDevice }
                if existing.isEmpty {
                    let active = try await connection.rows(
                        """
                        SELECT count(*) FROM devices
                        WHERE account_id = \(device.account.rawValue) AND revoked_at IS NULL
                        """,
                        logger: logger
                    ).decode(Int.self).all().first ?? 0
                    guard active < maximumDevices else {
                        throw SyncServerError(.quotaExceeded, "the account has the most devices allowed")
                    }
                }
                let rows = try await connection.query(
                    """
                    INSERT INTO devices (account_id, device_id, name, token_hash, created_at, last_seen_at)
                    VALUES (\(device.account.rawValue), \(device.id.rawValue), \(device.name),
                            \(ByteBuffer(bytes: device.tokenHash)), \(now), \(now))
                    ON CONFLICT (account_id, device_id) DO UPDATE SET
                        name = EXCLUDED.name, token_hash = EXCLUDED.token_hash,
                        last_seen_at = EXCLUDED.last_seen_at
                    RETURNING \(unescaped: Self.deviceColumns)
                    """,
                    logger: logger
                )
                return try await Self.devices(from: rows).first!
            }
        }
    }

    package func device(tokenHash: [UInt8]) async throws -> DeviceRecord? {
        try await attempt("look a device up") {
            try await Self.devices(from: client.query(
                """
                SELECT \(unescaped: Self.deviceColumns) FROM devices
                WHERE token_hash = \(ByteBuffer(bytes: tokenHash)) AND revoked_at IS NULL
                """,
                logger: logger
            )).first
        }
    }

    package func devices(of account: AccountID) async throws -> [DeviceRecord] {
        try await attempt("list devices") {
            try await Self.devices(from: client.query(
                """
                SELECT \(unescaped: Self.deviceColumns) FROM devices
                WHERE account_id = \(account.rawValue) ORDER BY device_id
                """,
                logger: logger
            ))
        }
    }

    package func revokeDevice(_ device: DeviceID, of account: AccountID, now: Date) async throws -> Bool {
        try await attempt("revoke a device") {
            try await client.inTransaction(logger: logger) { connection in
                let found = try await connection.rows(
                    """
                    UPDATE devices SET revoked_at = coalesce(revoked_at, \(now))
                    WHERE account_id = \(account.rawValue) AND device_id = \(device.rawValue)
                    RETURNING 1
                    """,
                    logger: logger
                ).collect().count == 1
                if found {
                    // Heard by every process's listener (this one's too) once the revocation commits.
                    let payload = PostgresChangeNotification.payload(for: .revocation(of: device, in: account))
                    try await connection.query(
                        "SELECT pg_notify(\(PostgresChangeNotification.channel), \(payload))", logger: logger)
                }
                return found
            }
        }
    }

    package func forgetDevice(_ device: DeviceID, of account: AccountID) async throws {
        _ = try await attempt("forget a device") {
            // The device's acknowledgements go with it (ON DELETE CASCADE).
            try await client.query(
                "DELETE FROM devices WHERE account_id = \(account.rawValue) AND device_id = \(device.rawValue)", logger: logger)
        }
    }

    /// Locks the account's counter row for the rest of the transaction; throws `notFound` when the
    /// account does not exist. Returns the account's latest sequence number and item count.
    @discardableResult
    func lockAccount(_ account: AccountID, on connection: PostgresConnection) async throws -> (
        lastSequence: Int64, itemCount: Int64
    ) {
        let rows = try await connection.rows(
            """
            SELECT last_sequence, item_count FROM account_sequences
            WHERE account_id = \(account.rawValue) FOR UPDATE
            """,
            logger: logger
        ).decode((Int64, Int64).self).all()
        guard let row = rows.first else { throw SyncServerError(.notFound, "no such account") }
        return (row.0, row.1)
    }

    static let deviceColumns = "account_id, device_id, name, created_at, last_seen_at, revoked_at"

    static func devices(from rows: PostgresRowSequence) async throws -> [DeviceRecord] {
        var devices: [DeviceRecord] = []
        for try await (account, id, name, createdAt, lastSeenAt, revokedAt) in rows.decode(
            (UUID, String, String, Date, Date, Date?).self
        ) {
            guard let deviceID = DeviceID(id) else {
                throw SyncServerError(.storageFailure, "the database holds an invalid device ID")
            }
            devices.append(DeviceRecord(
                account: AccountID(account), id: deviceID, name: name,
                createdAt: createdAt, lastSeenAt: lastSeenAt, revokedAt: revokedAt
            ))
        }
        return devices
    }
}

import Foundation
import PostgresNIO
import SyncCore

extension PostgresStorage {
    /// What the server keeps per device and zone (the `acknowledgements` row) that an upload
    /// reads: whether the device must resync from 0.
    struct DeviceZoneState {
        var mustResync: Bool
    }

    func deviceZoneState(
        _ device: DeviceID, of account: AccountID, zone: ZoneID, on connection: PostgresConnection
    ) async throws -> DeviceZoneState? {
        let rows = try await connection.rows(
            """
            SELECT must_resync FROM acknowledgements
            WHERE account_id = \(account.rawValue) AND device_id = \(device.rawValue) AND zone = \(zone.rawValue)
            """,
            logger: logger
        ).decode(Bool.self).all()
        return rows.first.map { DeviceZoneState(mustResync: $0) }
    }

    /// Raises the device's acknowledged position to `acknowledged` (clamped to the account's latest
    /// sequence, never lowered) and marks the device seen. Nothing happens for a device the account
    /// does not have.
    func recordDeviceZoneState(
        _ device: DeviceID, of account: AccountID, zone: ZoneID, acknowledged: UInt64, now: Date,
        on connection: PostgresConnection
    ) async throws {
        try await connection.query(
            """
            WITH seen AS (
                UPDATE devices SET last_seen_at = greatest(last_seen_at, \(now))
                WHERE account_id = \(account.rawValue) AND device_id = \(device.rawValue)
                RETURNING account_id, device_id
            )
            INSERT INTO acknowledgements (account_id, device_id, zone, sequence)
            SELECT seen.account_id, seen.device_id, \(zone.rawValue), least(\(Int64(clamping: acknowledged)), s.last_sequence)
            FROM seen JOIN account_sequences s ON s.account_id = seen.account_id
            ON CONFLICT (account_id, device_id, zone) DO UPDATE SET
                sequence = greatest(acknowledgements.sequence, EXCLUDED.sequence)
            """,
            logger: logger
        )
    }

    /// After a collection raised `zone`'s horizon to `horizon`: every device of the account (not
    /// revoked) that had not acknowledged up to it must resync the zone from 0 (decision 0031).
    func requireResync(account: UUID, zone: ZoneID, below horizon: Int64, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            INSERT INTO acknowledgements (account_id, device_id, zone, sequence, must_resync)
            SELECT account_id, device_id, \(zone.rawValue), 0, true FROM devices
            WHERE account_id = \(account) AND revoked_at IS NULL
            ON CONFLICT (account_id, device_id, zone) DO UPDATE SET must_resync = true
            WHERE acknowledgements.sequence < \(horizon)
            """,
            logger: logger
        )
    }

    /// A resync from 0 has started: the device may pull and push again.
    func resyncStarted(_ device: DeviceID, of account: AccountID, zone: ZoneID, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            UPDATE acknowledgements SET must_resync = false
            WHERE account_id = \(account.rawValue) AND device_id = \(device.rawValue) AND zone = \(zone.rawValue)
            """,
            logger: logger
        )
    }
}

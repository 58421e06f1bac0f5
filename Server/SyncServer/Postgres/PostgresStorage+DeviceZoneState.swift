import Foundation
import PostgresNIO
import SyncCore

extension PostgresStorage {
    /// What the server keeps per device and zone (the `acknowledgements` row): whether the device
    /// must resync from 0, and its last batch with the answer.
    struct DeviceZoneState {
        var mustResync: Bool
        var lastBatch: BatchMerge.RememberedBatch<ItemID>?
    }

    func deviceZoneState(
        _ device: DeviceID, of account: AccountID, zone: ZoneID, on connection: PostgresConnection
    ) async throws -> DeviceZoneState? {
        let rows = try await connection.rows(
            """
            SELECT must_resync, last_batch, last_answer FROM acknowledgements
            WHERE account_id = \(account.rawValue) AND device_id = \(device.rawValue) AND zone = \(zone.rawValue)
            """,
            logger: logger
        ).decode((Bool, Int64?, ByteBuffer?).self).all()
        guard let row = rows.first else { return nil }
        let lastBatch = try row.1.flatMap { id in
            try row.2.map { try BatchMerge.RememberedBatch(batchID: UInt64(id), encodedAnswer: $0.readableBytesView) }
        }
        return DeviceZoneState(mustResync: row.0, lastBatch: lastBatch)
    }

    /// Raises the device's acknowledged position to `acknowledged` (clamped to the account's latest
    /// sequence, never lowered), replaces the remembered batch when `batchID` is given, and marks the
    /// device seen. Nothing happens for a device the account does not have.
    func recordDeviceZoneState(
        _ device: DeviceID, of account: AccountID, zone: ZoneID, acknowledged: UInt64, batchID: UInt64? = nil,
        answer: [UInt8]? = nil, now: Date, on connection: PostgresConnection
    ) async throws {
        try await connection.query(
            """
            WITH seen AS (
                UPDATE devices SET last_seen_at = greatest(last_seen_at, \(now))
                WHERE account_id = \(account.rawValue) AND device_id = \(device.rawValue)
                RETURNING account_id, device_id
            )
            INSERT INTO acknowledgements (account_id, device_id, zone, sequence, last_batch, last_answer)
            SELECT seen.account_id, seen.device_id, \(zone.rawValue), least(\(Int64(clamping: acknowledged)), s.last_sequence),
                   \(batchID.map { Int64(clamping: $0) }), \(answer.map { ByteBuffer(bytes: $0) })
            FROM seen JOIN account_sequences s ON s.account_id = seen.account_id
            ON CONFLICT (account_id, device_id, zone) DO UPDATE SET
                sequence = greatest(acknowledgements.sequence, EXCLUDED.sequence),
                last_batch = coalesce(EXCLUDED.last_batch, acknowledgements.last_batch),
                last_answer = coalesce(EXCLUDED.last_answer, acknowledgements.last_answer)
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

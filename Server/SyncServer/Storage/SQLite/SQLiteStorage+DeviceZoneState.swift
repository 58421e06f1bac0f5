import DurableSQLite
import Foundation
import GRDB
import SyncCore

extension SQLiteStorage {
    /// What the server keeps per device and zone (the `acknowledgement` row): the acknowledged
    /// position and whether the device must resync from 0.
    /// Only devices the account has get a row.
    struct DeviceZoneState {
        var acknowledged: Int64
        var mustResync: Bool

        static func fetch(account: String, device: DeviceID, zone: ZoneID, in db: Database) throws -> DeviceZoneState? {
            guard let row = try Row.fetchOne(
                db.cachedStatement(sql: """
                    SELECT sequence, mustResync FROM acknowledgement
                    WHERE account = ? AND device = ? AND zone = ?
                    """),
                arguments: [account, device.rawValue, zone.rawValue])
            else { return nil }
            return DeviceZoneState(acknowledged: row["sequence"], mustResync: row["mustResync"])
        }

        /// Raises the acknowledged position to `acknowledged` (never lowers it) and marks the device
        /// seen. Nothing happens for a device the account does not have.
        static func record(
            account: String, device: DeviceID, zone: ZoneID, acknowledged: UInt64, now: Date, in db: Database
        ) throws {
            try db.executeCached(
                sql: """
                    INSERT INTO acknowledgement (account, device, zone, sequence)
                    SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM device WHERE account = ? AND id = ?)
                    ON CONFLICT (account, device, zone) DO UPDATE SET sequence = max(sequence, excluded.sequence)
                    """,
                arguments: [account, device.rawValue, zone.rawValue, Int64(clamping: acknowledged), account, device.rawValue])
            try db.executeCached(
                sql: "UPDATE device SET lastSeenAt = max(lastSeenAt, ?) WHERE account = ? AND id = ?",
                arguments: [now.timeIntervalSince1970, account, device.rawValue])
        }

        /// After a collection raised `zone`'s horizon: every device of the account (not revoked)
        /// that had not acknowledged up to it must resync the zone from 0 (decision 0031).
        static func requireResync(account: String, zone: ZoneID, below horizon: Int64, in db: Database) throws {
            try db.executeCached(
                sql: """
                    INSERT INTO acknowledgement (account, device, zone, sequence, mustResync)
                    SELECT account, id, ?, 0, 1 FROM device WHERE account = ? AND revokedAt IS NULL
                    ON CONFLICT (account, device, zone) DO UPDATE SET mustResync = 1 WHERE sequence < ?
                    """,
                arguments: [zone.rawValue, account, horizon])
        }

        /// A resync from 0 has started: the device may pull and push again.
        static func resyncStarted(account: String, device: DeviceID, zone: ZoneID, in db: Database) throws {
            try db.executeCached(
                sql: "UPDATE acknowledgement SET mustResync = 0 WHERE account = ? AND device = ? AND zone = ?",
                arguments: [account, device.rawValue, zone.rawValue])
        }
    }
}

import Foundation
import GRDB
import SyncCore

extension SQLiteStorage {
    package func registerDevice(_ device: NewDevice, maximumDevices: Int, now: Date) async throws -> DeviceRecord {
        try await write("registering a device") { db in
            let account = device.account.description
            let existing = try Row.fetchOne(
                db, sql: "SELECT createdAt, revokedAt FROM device WHERE account = ? AND id = ?",
                arguments: [account, device.id.rawValue])
            if let existing {
                guard (existing["revokedAt"] as Double?) == nil else { throw SyncServerError.revokedDevice }
                try db.execute(
                    sql: "UPDATE device SET name = ?, tokenHash = ?, lastSeenAt = ? WHERE account = ? AND id = ?",
                    arguments: [device.name, Data(device.tokenHash), now.timeIntervalSince1970, account, device.id.rawValue])
                return DeviceRecord(
                    account: device.account, id: device.id, name: device.name,
                    createdAt: Date(timeIntervalSince1970: existing["createdAt"]), lastSeenAt: now, revokedAt: nil)
            }
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM account WHERE id = ?", arguments: [account]) != nil else {
                throw SyncServerError(.notFound, "no such account")
            }
            let active = try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM device WHERE account = ? AND revokedAt IS NULL", arguments: [account]) ?? 0
            guard active < maximumDevices else { throw SyncServerError(.quotaExceeded, "the account has too many devices") }
            try db.execute(
                sql: "INSERT INTO device (account, id, name, tokenHash, createdAt, lastSeenAt) VALUES (?, ?, ?, ?, ?, ?)",
                arguments: [account, device.id.rawValue, device.name, Data(device.tokenHash), now.timeIntervalSince1970, now.timeIntervalSince1970])
            return DeviceRecord(account: device.account, id: device.id, name: device.name, createdAt: now, lastSeenAt: now, revokedAt: nil)
        }
    }

    package func device(tokenHash: [UInt8]) async throws -> DeviceRecord? {
        try await read("authenticating a device") { db in
            try Row.fetchOne(
                db, sql: "SELECT * FROM device WHERE tokenHash = ? AND revokedAt IS NULL", arguments: [Data(tokenHash)]
            ).map(Self.deviceRecord)
        }
    }

    package func devices(of account: AccountID) async throws -> [DeviceRecord] {
        try await read("listing devices") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM device WHERE account = ? ORDER BY id", arguments: [account.description])
                .map(Self.deviceRecord)
        }
    }

    package func revokeDevice(_ device: DeviceID, of account: AccountID, now: Date) async throws -> Bool {
        let revoked = try await write("revoking a device") { db in
            try db.execute(
                sql: "UPDATE device SET revokedAt = COALESCE(revokedAt, ?) WHERE account = ? AND id = ?",
                arguments: [now.timeIntervalSince1970, account.description, device.rawValue])
            return db.changesCount == 1
        }
        if revoked { broadcaster.publish(.revocation(of: device, in: account)) }
        return revoked
    }

    package func forgetDevice(_ device: DeviceID, of account: AccountID) async throws {
        try await write("forgetting a device") { db in
            // The device's acknowledgements go with it (ON DELETE CASCADE).
            try db.execute(sql: "DELETE FROM device WHERE account = ? AND id = ?", arguments: [account.description, device.rawValue])
        }
    }

    static func deviceRecord(_ row: Row) throws -> DeviceRecord {
        guard let account = AccountID(row["account"] as String), let id = DeviceID(row["id"] as String) else {
            throw SyncServerError(.storageFailure, "corrupt device record")
        }
        let revokedAt: Double? = row["revokedAt"]
        return DeviceRecord(
            account: account, id: id, name: row["name"],
            createdAt: Date(timeIntervalSince1970: row["createdAt"]), lastSeenAt: Date(timeIntervalSince1970: row["lastSeenAt"]),
            revokedAt: revokedAt.map { Date(timeIntervalSince1970: $0) })
    }
}

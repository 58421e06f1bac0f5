import DurableSQLite
import Foundation
import GRDB
import SyncCore

extension SQLiteStorage {
    /// The tables of the authenticated account state (decisions 0120, 0121): the device log and
    /// each device's latest statement per zone, opaque to the server.
    static func registerAccountStateMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v4-account-state") { db in
            try db.execute(sql: """
                CREATE TABLE deviceLog (
                    account TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                    position INTEGER NOT NULL,
                    entry BLOB NOT NULL,
                    createdAt REAL NOT NULL,
                    PRIMARY KEY (account, position)
                ) STRICT, WITHOUT ROWID;
                CREATE TABLE zoneStatement (
                    account TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                    zone TEXT NOT NULL,
                    device TEXT NOT NULL,
                    statement BLOB NOT NULL,
                    publishedAt REAL NOT NULL,
                    PRIMARY KEY (account, zone, device)
                ) STRICT, WITHOUT ROWID;
                """)
        }
    }

    /// The accounts' identity cards (decision 0282), opaque to the server.
    static func registerIdentityCardMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("identityCard") { db in
            try db.execute(sql: """
                CREATE TABLE identityCard (
                    account TEXT PRIMARY KEY NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                    card BLOB NOT NULL,
                    publishedAt REAL NOT NULL
                ) STRICT, WITHOUT ROWID;
                """)
        }
    }

    package func appendDeviceLogEntry(_ entry: [UInt8], at index: Int, of account: AccountID, now: Date) async throws {
        try await write("appending to the device log") { db in
            let id = account.description
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM account WHERE id = ?", arguments: [id]) != nil else {
                throw SyncServerError(.notFound, "no such account")
            }
            let length = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM deviceLog WHERE account = ?", arguments: [id]) ?? 0
            try AccountStateRules.checkAppend(at: index, length: length)
            try db.executeCached(
                sql: "INSERT INTO deviceLog (account, position, entry, createdAt) VALUES (?, ?, ?, ?)",
                arguments: [id, index, Data(entry), now.timeIntervalSince1970])
        }
    }

    package func deviceLog(of account: AccountID, from index: Int, limit: Int) async throws -> [DeviceLogRecord] {
        try await read("reading the device log") { db in
            try Row.fetchAll(
                db, sql: "SELECT position, entry FROM deviceLog WHERE account = ? AND position >= ? ORDER BY position LIMIT ?",
                arguments: [account.description, index, limit]
            ).map { DeviceLogRecord(index: $0["position"], entry: Array($0["entry"] as Data)) }
        }
    }

    package func publishStatement(_ statement: [UInt8], zone: ZoneID, device: DeviceID, of account: AccountID, now: Date) async throws {
        try await write("publishing a statement") { db in
            try db.executeCached(
                sql: """
                    INSERT INTO zoneStatement (account, zone, device, statement, publishedAt) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (account, zone, device) DO UPDATE SET statement = excluded.statement, publishedAt = excluded.publishedAt
                    """,
                arguments: [account.description, zone.rawValue, device.rawValue, Data(statement), now.timeIntervalSince1970])
        }
    }

    package func statements(zone: ZoneID, of account: AccountID) async throws -> [StatementRecord] {
        try await read("reading statements") { db in
            try Row.fetchAll(
                db, sql: "SELECT device, statement, publishedAt FROM zoneStatement WHERE account = ? AND zone = ? ORDER BY device",
                arguments: [account.description, zone.rawValue]
            ).map { row in
                guard let device = DeviceID(row["device"] as String) else {
                    throw SyncServerError(.storageFailure, "corrupt statement record")
                }
                return StatementRecord(
                    device: device, statement: Array(row["statement"] as Data),
                    publishedAt: Date(timeIntervalSince1970: row["publishedAt"]))
            }
        }
    }

    package func publishIdentityCard(_ card: [UInt8], of account: AccountID, now: Date) async throws {
        try await write("publishing an identity card") { db in
            try db.executeCached(
                sql: """
                    INSERT INTO identityCard (account, card, publishedAt) VALUES (?, ?, ?)
                    ON CONFLICT (account) DO UPDATE SET card = excluded.card, publishedAt = excluded.publishedAt
                    """,
                arguments: [account.description, Data(card), now.timeIntervalSince1970])
        }
    }

    package func identityCard(of account: AccountID) async throws -> [UInt8]? {
        try await read("reading an identity card") { db in
            try Data.fetchOne(db, sql: "SELECT card FROM identityCard WHERE account = ?", arguments: [account.description]).map { Array($0) }
        }
    }
}

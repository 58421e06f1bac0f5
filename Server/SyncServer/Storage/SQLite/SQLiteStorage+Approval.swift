import Foundation
import GRDB
import SyncCore

extension SQLiteStorage {
    /// The approval requests' table (decision 0133).
    static func registerApprovalMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("approvalRequest") { db in
            try db.execute(sql: """
                CREATE TABLE approvalRequest (
                    account TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                    id TEXT NOT NULL,
                    device TEXT NOT NULL,
                    request BLOB NOT NULL,
                    response BLOB,
                    createdAt REAL NOT NULL,
                    PRIMARY KEY (account, id)
                ) STRICT, WITHOUT ROWID
                """)
        }
        // The two parts of an approval made in turn (decision 0271).
        migrator.registerMigration("approvalRequestParts") { db in
            try db.execute(sql: "ALTER TABLE approvalRequest ADD COLUMN offer BLOB")
            try db.execute(sql: "ALTER TABLE approvalRequest ADD COLUMN reveal BLOB")
        }
    }

    package func createApprovalRequest(_ request: ApprovalRecord, now: Date) async throws {
        try await write("creating an approval request") { db in
            let account = request.account.description
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM account WHERE id = ?", arguments: [account]) != nil else {
                throw SyncServerError(.notFound, "no such account")
            }
            let expiry = ApprovalRules.expiry(at: now).timeIntervalSince1970
            try db.execute(sql: "DELETE FROM approvalRequest WHERE account = ? AND createdAt <= ?", arguments: [account, expiry])
            let pending = try Int.fetchOne(
                db, sql: "SELECT COUNT(*) FROM approvalRequest WHERE account = ? AND response IS NULL", arguments: [account]) ?? 0
            try ApprovalRules.checkCreate(pending: pending)
            try db.execute(
                sql: "INSERT INTO approvalRequest (account, id, device, request, createdAt) VALUES (?, ?, ?, ?, ?)",
                arguments: [account, request.id, request.device.rawValue, Data(request.request), request.createdAt.timeIntervalSince1970])
        }
    }

    package func approvalRequests(of account: AccountID, now: Date) async throws -> [ApprovalRecord] {
        try await read("reading approval requests") { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, device, request, offer, reveal, response, createdAt FROM approvalRequest
                    WHERE account = ? AND createdAt > ? ORDER BY createdAt, id
                    """,
                arguments: [account.description, ApprovalRules.expiry(at: now).timeIntervalSince1970]
            ).map { row in
                guard let device = DeviceID(row["device"] as String) else {
                    throw SyncServerError(.storageFailure, "corrupt approval request")
                }
                let (offer, reveal, response): (Data?, Data?, Data?) = (row["offer"], row["reveal"], row["response"])
                return ApprovalRecord(
                    id: row["id"], account: account, device: device, request: Array(row["request"] as Data), offer: offer.map { Array($0) },
                    reveal: reveal.map { Array($0) }, response: response.map { Array($0) }, createdAt: Date(timeIntervalSince1970: row["createdAt"]))
            }
        }
    }

    package func offerApprovalRequest(_ id: String, of account: AccountID, by device: DeviceID, offer: [UInt8], now: Date) async throws -> Bool {
        try await write("offering to approve a request") { db in
            try db.execute(
                sql: """
                    UPDATE approvalRequest SET offer = ?
                    WHERE account = ? AND id = ? AND device <> ? AND offer IS NULL AND response IS NULL AND createdAt > ?
                    """,
                arguments: [Data(offer), account.description, id, device.rawValue, ApprovalRules.expiry(at: now).timeIntervalSince1970])
            return db.changesCount == 1
        }
    }

    package func revealApprovalRequest(_ id: String, of account: AccountID, by device: DeviceID, reveal: [UInt8], now: Date) async throws -> Bool {
        try await write("revealing an approval request's part") { db in
            try db.execute(
                sql: """
                    UPDATE approvalRequest SET reveal = ?
                    WHERE account = ? AND id = ? AND device = ? AND offer IS NOT NULL AND reveal IS NULL AND createdAt > ?
                    """,
                arguments: [Data(reveal), account.description, id, device.rawValue, ApprovalRules.expiry(at: now).timeIntervalSince1970])
            return db.changesCount == 1
        }
    }

    package func answerApprovalRequest(_ id: String, of account: AccountID, response: [UInt8], now: Date) async throws -> Bool {
        try await write("answering an approval request") { db in
            try db.execute(
                sql: """
                    UPDATE approvalRequest SET response = ?
                    WHERE account = ? AND id = ? AND response IS NULL AND createdAt > ?
                    """,
                arguments: [Data(response), account.description, id, ApprovalRules.expiry(at: now).timeIntervalSince1970])
            return db.changesCount == 1
        }
    }
}

import Foundation
import PostgresNIO
import SyncCore

extension PostgresStorage {
    package func createApprovalRequest(_ request: ApprovalRecord, now: Date) async throws {
        try await attempt("create an approval request") {
            try await client.inTransaction(logger: logger) { connection in
                // The account's counter row serializes creations, so the pending bound holds.
                try await lockAccount(request.account, on: connection)
                try await connection.query(
                    """
                    DELETE FROM approval_requests
                    WHERE account_id = \(request.account.rawValue) AND created_at <= \(ApprovalRules.expiry(at: now))
                    """,
                    logger: logger)
                let pending = try await connection.rows(
                    """
                    SELECT count(*) FROM approval_requests
                    WHERE account_id = \(request.account.rawValue) AND response IS NULL
                    """,
                    logger: logger
                ).decode(Int.self).all().first ?? 0
                try ApprovalRules.checkCreate(pending: pending)
                try await connection.query(
                    """
                    INSERT INTO approval_requests (account_id, id, device_id, request, created_at)
                    VALUES (\(request.account.rawValue), \(request.id), \(request.device.rawValue),
                            \(ByteBuffer(bytes: request.request)), \(request.createdAt))
                    """,
                    logger: logger)
            }
        }
    }

    package func approvalRequests(of account: AccountID, now: Date) async throws -> [ApprovalRecord] {
        try await attempt("read approval requests") {
            try await client.query(
                """
                SELECT id, device_id, request, offer, reveal, response, created_at FROM approval_requests
                WHERE account_id = \(account.rawValue) AND created_at > \(ApprovalRules.expiry(at: now))
                ORDER BY created_at, id
                """,
                logger: logger
            ).decode((String, String, ByteBuffer, ByteBuffer?, ByteBuffer?, ByteBuffer?, Date).self).all().map { row in
                guard let device = DeviceID(row.1) else { throw SyncServerError(.storageFailure, "corrupt approval request") }
                return ApprovalRecord(
                    id: row.0, account: account, device: device, request: Array(buffer: row.2), offer: row.3.map { Array(buffer: $0) },
                    reveal: row.4.map { Array(buffer: $0) }, response: row.5.map { Array(buffer: $0) }, createdAt: row.6)
            }
        }
    }

    package func offerApprovalRequest(_ id: String, of account: AccountID, by device: DeviceID, offer: [UInt8], now: Date) async throws -> Bool {
        try await attempt("offer to approve a request") {
            try await client.query(
                """
                UPDATE approval_requests SET offer = \(ByteBuffer(bytes: offer))
                WHERE account_id = \(account.rawValue) AND id = \(id) AND device_id <> \(device.rawValue)
                  AND offer IS NULL AND response IS NULL AND created_at > \(ApprovalRules.expiry(at: now))
                RETURNING id
                """,
                logger: logger
            ).collect().count == 1
        }
    }

    package func revealApprovalRequest(_ id: String, of account: AccountID, by device: DeviceID, reveal: [UInt8], now: Date) async throws -> Bool {
        try await attempt("reveal an approval request's part") {
            try await client.query(
                """
                UPDATE approval_requests SET reveal = \(ByteBuffer(bytes: reveal))
                WHERE account_id = \(account.rawValue) AND id = \(id) AND device_id = \(device.rawValue)
                  AND offer IS NOT NULL AND reveal IS NULL AND created_at > \(ApprovalRules.expiry(at: now))
                RETURNING id
                """,
                logger: logger
            ).collect().count == 1
        }
    }

    package func answerApprovalRequest(_ id: String, of account: AccountID, response: [UInt8], now: Date) async throws -> Bool {
        try await attempt("answer an approval request") {
            try await client.query(
                """
                UPDATE approval_requests SET response = \(ByteBuffer(bytes: response))
                WHERE account_id = \(account.rawValue) AND id = \(id) AND response IS NULL
                  AND created_at > \(ApprovalRules.expiry(at: now))
                RETURNING id
                """,
                logger: logger
            ).collect().count == 1
        }
    }
}

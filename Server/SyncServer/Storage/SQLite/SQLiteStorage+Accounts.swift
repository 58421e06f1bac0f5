import Foundation
import GRDB
import SyncCore

extension SQLiteStorage {
    package func createAccount(_ account: NewAccount, now: Date) async throws {
        try await write("creating an account") { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM account WHERE name = ?", arguments: [account.name]) != nil {
                throw SyncServerError(.accountExists, "an account with that name exists")
            }
            let credentials = account.credentials
            try db.execute(
                sql: """
                    INSERT INTO account (
                        id, name, verifier, kdfParameters, salt, wrappedAccountKey, wrappedRecoveryKey, recoveryVerifier, createdAt)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    account.id.description, account.name, Data(credentials.verifier), Data(credentials.kdfParameters),
                    Data(credentials.salt), Data(credentials.wrappedAccountKey), credentials.wrappedRecoveryKey.map { Data($0) },
                    credentials.recoveryVerifier.map { Data($0) }, now.timeIntervalSince1970,
                ])
        }
    }

    package func account(named name: String) async throws -> AccountRecord? {
        try await read("reading an account") { db in
            try Row.fetchOne(db, sql: "SELECT * FROM account WHERE name = ?", arguments: [name]).map(Self.accountRecord)
        }
    }

    package func account(id: AccountID) async throws -> AccountRecord? {
        try await read("reading an account") { db in
            try Row.fetchOne(db, sql: "SELECT * FROM account WHERE id = ?", arguments: [id.description]).map(Self.accountRecord)
        }
    }

    package func replaceCredentials(of account: AccountID, with credentials: AccountCredentials) async throws {
        try await write("replacing credentials") { db in
            try db.execute(
                sql: """
                    UPDATE account SET verifier = ?, kdfParameters = ?, salt = ?, wrappedAccountKey = ?, wrappedRecoveryKey = ?,
                        recoveryVerifier = ?
                    WHERE id = ?
                    """,
                arguments: [
                    Data(credentials.verifier), Data(credentials.kdfParameters), Data(credentials.salt),
                    Data(credentials.wrappedAccountKey), credentials.wrappedRecoveryKey.map { Data($0) },
                    credentials.recoveryVerifier.map { Data($0) }, account.description,
                ])
            guard db.changesCount == 1 else { throw SyncServerError(.notFound, "no such account") }
        }
    }

    static func accountRecord(_ row: Row) throws -> AccountRecord {
        guard let id = AccountID(row["id"] as String) else { throw SyncServerError(.storageFailure, "corrupt account ID") }
        let recovery: Data? = row["wrappedRecoveryKey"]
        let recoveryVerifier: Data? = row["recoveryVerifier"]
        return AccountRecord(
            id: id, name: row["name"],
            credentials: AccountCredentials(
                verifier: bytes(row["verifier"]), kdfParameters: bytes(row["kdfParameters"]), salt: bytes(row["salt"]),
                wrappedAccountKey: bytes(row["wrappedAccountKey"]), wrappedRecoveryKey: recovery.map { Array($0) },
                recoveryVerifier: recoveryVerifier.map { Array($0) }),
            createdAt: Date(timeIntervalSince1970: row["createdAt"]))
    }

    static func bytes(_ data: Data) -> [UInt8] { Array(data) }
}

import Crypto
import Foundation
import GRDB

/// The reference operations every product figure is judged against, measured in the same run.
enum Baselines {
    /// Raw AES-256-GCM seal of `plaintext` under one key: the floor for an item seal.
    static func aesGCMSeal(_ plaintext: [UInt8]) -> (Int) throws -> Void {
        let key = SymmetricKey(size: .bits256)
        return { _ in _ = try AES.GCM.seal(plaintext, using: key) }
    }

    /// A plain table with the columns a keychain row needs for its lookup, in WAL mode and with
    /// durable commits (`synchronous = FULL`) like the keychain's own database.
    struct PlainTable {
        let pool: DatabasePool

        init(directory: URL) throws {
            pool = try DatabasePool(path: directory.appendingPathComponent("baseline.sqlite").path)
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
            try pool.write { db in
                try db.execute(sql: """
                    CREATE TABLE item (
                        id INTEGER PRIMARY KEY,
                        service TEXT NOT NULL,
                        account TEXT NOT NULL,
                        data BLOB NOT NULL,
                        UNIQUE (service, account)
                    )
                    """)
            }
        }

        /// One insert of `data` per transaction, through a cached prepared statement.
        func insert(service: String, data: [UInt8]) -> (Int) throws -> Void {
            { index in
                try pool.write { db in
                    let statement = try db.cachedStatement(sql: "INSERT INTO item (service, account, data) VALUES (?, ?, ?)")
                    try statement.execute(arguments: [service, "account-\(index)", Data(data)])
                }
            }
        }

        /// One indexed select of `data` by (service, account), through a cached prepared statement,
        /// outside a transaction (`unsafeRead`): a single statement needs none, and the keychain's
        /// own lookup runs its one statement the same way, so neither pays for BEGIN/COMMIT.
        func select(service: String, accounts: Int) -> (Int) throws -> Void {
            { index in
                try pool.unsafeRead { db in
                    let statement = try db.cachedStatement(sql: "SELECT data FROM item WHERE service = ? AND account = ?")
                    guard try Data.fetchOne(statement, arguments: [service, "account-\(index % accounts)"]) != nil else {
                        throw BenchmarkError("baseline row missing")
                    }
                }
            }
        }
    }
}

/// A benchmark that could not run; the message says why.
struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A benchmark that cannot run here (no PostgreSQL, no network stack…): its rows say why instead
/// of failing the run.
struct BenchmarkUnavailable: Error {
    var reason: String
    init(_ reason: String) { self.reason = reason }
}

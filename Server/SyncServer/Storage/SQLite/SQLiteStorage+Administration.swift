import Foundation
import GRDB

extension SQLiteStorage {
    /// The migration that adds the disabled flag (decision 0152), registered after the others.
    static func registerAdministrationMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("accountDisabled") { db in
            try db.execute(sql: "ALTER TABLE account ADD COLUMN disabledAt REAL")
        }
    }

    package func accountSummaries() async throws -> [AccountSummary] {
        try await read("listing accounts") { db in
            try Row.fetchAll(db, sql: """
                SELECT a.name, a.itemCount, a.storedBytes, a.disabledAt,
                       (SELECT COUNT(*) FROM device d WHERE d.account = a.id AND d.revokedAt IS NULL) AS devices,
                       (SELECT MAX(lastSeenAt) FROM device d WHERE d.account = a.id) AS lastSeen
                FROM account a ORDER BY a.name
                """
            ).map { row in
                let lastSeen: Double? = row["lastSeen"]
                let disabledAt: Double? = row["disabledAt"]
                return AccountSummary(
                    name: row["name"], devices: row["devices"], items: row["itemCount"], bytes: row["storedBytes"],
                    lastSeen: lastSeen.map { Date(timeIntervalSince1970: $0) }, isDisabled: disabledAt != nil)
            }
        }
    }

    package func setDisabled(_ disabled: Bool, account id: AccountID) async throws {
        try await write("disabling an account") { db in
            try db.execute(
                sql: "UPDATE account SET disabledAt = CASE WHEN ? THEN COALESCE(disabledAt, unixepoch()) ELSE NULL END WHERE id = ?",
                arguments: [disabled, id.description])
            guard db.changesCount == 1 else { throw SyncServerError(.notFound, "no such account") }
        }
    }

    package func isDisabled(_ id: AccountID) async throws -> Bool {
        try await read("checking an account") { db in
            try Bool.fetchOne(db, sql: "SELECT disabledAt IS NOT NULL FROM account WHERE id = ?", arguments: [id.description]) ?? false
        }
    }
}

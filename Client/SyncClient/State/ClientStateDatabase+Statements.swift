import DurableSQLite
import Foundation
import GRDB
import KeychainCrypto
import SyncCore

extension ClientStateDatabase {
    /// The last statement of each device, this one included, that this device verified or made
    /// about each zone (decision 0180): a statement served later must continue it.
    static func registerStatementMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v3-zone-statements") { db in
            try db.execute(sql: """
                CREATE TABLE zone_statement (
                    zone TEXT NOT NULL,
                    device TEXT NOT NULL,
                    number INTEGER NOT NULL,
                    hash BLOB NOT NULL,
                    wire BLOB NOT NULL,
                    PRIMARY KEY (zone, device)
                )
                """)
        }
    }

    /// The number of this device's latest statement about each zone that the server took (its
    /// publish answered): an honest server serves it, or a later one, from then on (decision 0248).
    static func registerPublishedStatementMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v8-published-statement") { db in
            try db.execute(sql: "CREATE TABLE published_statement (zone TEXT PRIMARY KEY NOT NULL, number INTEGER NOT NULL)")
        }
    }

    /// The number of this device's latest statement about `zone` the server took; nil: none yet.
    package func publishedStatementNumber(_ zone: ZoneID) throws(SyncClientError) -> UInt64? {
        try read { db in
            try Int64.fetchOne(db, sql: "SELECT number FROM published_statement WHERE zone = ?", arguments: [zone.rawValue])
                .map { UInt64(bitPattern: $0) }
        }
    }

    /// Records that the server took this device's statement `number` about `zone`.
    package func recordPublishedStatement(_ number: UInt64, zone: ZoneID) throws(SyncClientError) {
        try write { db in
            try db.executeCached(
                sql: """
                    INSERT INTO published_statement (zone, number) VALUES (?, ?)
                    ON CONFLICT (zone) DO UPDATE SET number = max(number, excluded.number)
                    """,
                arguments: [zone.rawValue, Int64(bitPattern: number)])
        }
    }

    /// One recorded statement: its number, hash and wire form.
    package struct RecordedStatement: Sendable, Equatable {
        package var verified: ZoneStatementCheck.Verified
        package var wire: [UInt8]
    }

    /// The statements recorded for `zone`, by device.
    package func recordedStatements(_ zone: ZoneID) throws(SyncClientError) -> [DeviceID: RecordedStatement] {
        try read { db in
            var recorded: [DeviceID: RecordedStatement] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT device, number, hash, wire FROM zone_statement WHERE zone = ?", arguments: [zone.rawValue]) {
                guard let device = DeviceID(row[0] as String) else { continue }
                let number: Int64 = row[1]
                let hash: Data = row[2]
                let wire: Data = row[3]
                recorded[device] = RecordedStatement(
                    verified: .init(number: UInt64(bitPattern: number), hash: Array(hash)), wire: Array(wire))
            }
            return recorded
        }
    }

    /// Every recorded statement, the keychain zone's first: what an approving device hands over
    /// (decision 0192).
    package func allRecordedStatements() throws(SyncClientError) -> [(zone: ZoneID, device: DeviceID, wire: [UInt8])] {
        try read { db in
            try Row.fetchAll(
                db, sql: "SELECT zone, device, wire FROM zone_statement ORDER BY zone != ?, zone, device", arguments: [ZoneID.keychain.rawValue]
            ).compactMap { row in
                guard let device = DeviceID(row[1] as String) else { return nil }
                let wire: Data = row[2]
                return (ZoneID(row[0] as String), device, Array(wire))
            }
        }
    }

    /// Records `wire`, a statement of `device` about `zone` that continues the recorded one.
    package func recordStatement(_ wire: [UInt8], number: UInt64, hash: [UInt8], zone: ZoneID, device: DeviceID) throws(SyncClientError) {
        try write { db in
            try db.executeCached(
                sql: "INSERT OR REPLACE INTO zone_statement (zone, device, number, hash, wire) VALUES (?, ?, ?, ?, ?)",
                arguments: [zone.rawValue, device.rawValue, Int64(bitPattern: number), Data(hash), Data(wire)])
        }
    }

    /// The item name under which a zone's account-state problem is recorded: not an item ID (those
    /// are hex), so it names no item.
    package static let accountStateProblem = ItemID("account-state")
    /// How `status` names that problem.
    static let accountStateProblemName = "the account's state"

    /// Whether `zone` has an account-state problem recorded: a finding whose next round, in this
    /// process or the next, reads the whole feed again (R62).
    package func hasAccountStateProblem(_ zone: ZoneID) throws(SyncClientError) -> Bool {
        try read { db in
            try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM problem WHERE zone = ? AND item = ?)"),
                arguments: [zone.rawValue, Self.accountStateProblem.rawValue]) ?? false
        }
    }

    /// Records (a reason) or clears (nil) the account-state problem of `zone` (decision 0180).
    package func setAccountStateProblem(_ reason: String?, zone: ZoneID) throws(SyncClientError) {
        try write { db in
            if let reason {
                try recordProblem(db, zone: zone, item: Self.accountStateProblem, reason: reason)
            } else {
                try clearProblem(db, zone: zone, item: Self.accountStateProblem)
            }
        }
    }
}

import Foundation
import GRDB
import SyncCore

extension SQLiteStorage {
    /// Shared groups' membership logs and member accounts (decision 0283), the entries opaque.
    static func registerGroupMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("groupLog") { db in
            try db.execute(sql: """
                CREATE TABLE groupLog (
                    groupID TEXT NOT NULL,
                    position INTEGER NOT NULL,
                    entry BLOB NOT NULL,
                    createdAt REAL NOT NULL,
                    PRIMARY KEY (groupID, position)
                ) STRICT, WITHOUT ROWID;
                CREATE TABLE groupMember (
                    groupID TEXT NOT NULL,
                    account TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                    isCurrent INTEGER NOT NULL,
                    PRIMARY KEY (groupID, account)
                ) STRICT, WITHOUT ROWID;
                CREATE INDEX groupMemberByAccount ON groupMember (account, isCurrent);
                """)
        }
        // Members that only read (decision 0290).
        migrator.registerMigration("groupViewer") { db in
            try db.execute(sql: "ALTER TABLE groupMember ADD COLUMN isViewer INTEGER NOT NULL DEFAULT 0")
        }
    }

    package func appendGroupLogEntry(_ entry: [UInt8], at index: Int, of group: String, by account: AccountID, members: Set<AccountID>, viewers: Set<AccountID>, now: Date) async throws {
        try await write("appending to a group log") { db in
            let length = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM groupLog WHERE groupID = ?", arguments: [group]) ?? 0
            let isMember = try Bool.fetchOne(
                db, sql: "SELECT isCurrent FROM groupMember WHERE groupID = ? AND account = ?", arguments: [group, account.description]) ?? false
            try GroupRules.checkAppend(at: index, length: length, appenderIsMember: isMember)
            try db.execute(
                sql: "INSERT INTO groupLog (groupID, position, entry, createdAt) VALUES (?, ?, ?, ?)",
                arguments: [group, index, Data(entry), now.timeIntervalSince1970])
            try db.execute(sql: "UPDATE groupMember SET isCurrent = 0, isViewer = 0 WHERE groupID = ?", arguments: [group])
            for member in members {
                try db.execute(
                    sql: """
                        INSERT INTO groupMember (groupID, account, isCurrent, isViewer) VALUES (?, ?, 1, ?)
                        ON CONFLICT (groupID, account) DO UPDATE SET isCurrent = 1, isViewer = excluded.isViewer
                        """,
                    arguments: [group, member.description, viewers.contains(member)])
            }
        }
    }

    package func groupLog(of group: String, readBy account: AccountID, from index: Int, limit: Int) async throws -> [DeviceLogRecord] {
        try await read("reading a group log") { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM groupMember WHERE groupID = ? AND account = ?", arguments: [group, account.description]) != nil
            else { throw SyncServerError(.notFound, "no such group") }
            return try Row.fetchAll(
                db, sql: "SELECT position, entry FROM groupLog WHERE groupID = ? AND position >= ? ORDER BY position LIMIT ?",
                arguments: [group, index, limit]
            ).map { DeviceLogRecord(index: $0["position"], entry: Array($0["entry"] as Data)) }
        }
    }

    package func groups(of account: AccountID) async throws -> [GroupSummary] {
        try await read("listing groups") { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT m.groupID AS groupID, m.isViewer AS isViewer, (SELECT COUNT(*) FROM groupLog l WHERE l.groupID = m.groupID) AS entries
                    FROM groupMember m WHERE m.account = ? AND m.isCurrent = 1 ORDER BY m.groupID
                    """,
                arguments: [account.description]
            ).map { GroupSummary(group: $0["groupID"], entries: $0["entries"], isViewer: $0["isViewer"]) }
        }
    }

    package func members(of group: String) async throws -> Set<AccountID> {
        try await read("listing a group's members") { db in
            Set(try String.fetchAll(db, sql: "SELECT account FROM groupMember WHERE groupID = ? AND isCurrent = 1", arguments: [group])
                .compactMap(AccountID.init))
        }
    }
}

import DurableSQLite
import Foundation
import GRDB
import KeychainSQLiteConfig
import SyncCore

#if canImport(Glibc)
import Glibc
#endif

/// The client's own small database beside the keychain (`<keychain>.sync`, 0600): the enrolment,
/// and per zone the sync machine's durable state, the consumed journal position and the items
/// whose pulled versions were rejected (decision 0051). Item contents in it are sealed.
package final class ClientStateDatabase: Sendable {
    let queue: DatabaseQueue
    package let path: String

    /// The state file of the keychain at `keychainPath`.
    package static func path(forKeychain keychainPath: String) -> String { keychainPath + ".sync" }

    /// Removes the keychain's state file and its WAL companions (leaving the account, or a test
    /// or simulation losing the state); absent files are not an error.
    package static func removeFiles(forKeychain keychainPath: String) throws(SyncClientError) {
        let state = path(forKeychain: keychainPath)
        for path in [state, state + "-wal", state + "-shm"] where FileManager.default.fileExists(atPath: path) {
            do {
                try FileManager.default.removeItem(atPath: path)
            } catch {
                throw SyncClientError(.localStorage, "cannot remove the sync state file \(path)", underlying: error)
            }
        }
    }

    /// Whether a state file exists for the keychain.
    package static func exists(forKeychain keychainPath: String) -> Bool {
        FileManager.default.fileExists(atPath: path(forKeychain: keychainPath))
    }

    /// Opens (creating when `create`) the state database of the keychain at `keychainPath`.
    package init(keychainPath: String, create: Bool) throws(SyncClientError) {
        path = Self.path(forKeychain: keychainPath)
        if !FileManager.default.fileExists(atPath: path) {
            guard create else { throw SyncClientError(.notEnrolled, "this keychain is not enrolled; run `sync-client enroll` first") }
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw SyncClientError(.localStorage, "cannot create the sync state file (errno \(errno))") }
            fchmod(descriptor, 0o600)
            close(descriptor)
        }
        do {
            // Durable commits, like the keychain's: the state never claims what the disk lost.
            queue = try DurableSQLite.queue(path: path, label: "sync-state")
            queue.inDatabase(Self.checkpointWhenLong)
            try Self.migrator.migrate(queue)
        } catch let error as NotARegularFile {
            throw SyncClientError(.localStorage, error.description, underlying: error)
        } catch {
            throw SyncClientError(.localStorage, "cannot open the sync state file", underlying: error)
        }
    }

    /// No checkpoint when the connection closes: a first push paid 55 ms for it after its last
    /// durable commit (issue 35). A commit that leaves 1,000 frames or more in the WAL (SQLite's
    /// default for its automatic checkpoint) checkpoints and truncates it instead, which also
    /// bounds what the next process reads to rebuild the WAL's index (as the keychain does at
    /// 64 frames, decision 0160).
    private static func checkpointWhenLong(_ db: Database) {
        _ = keychain_sqlite_skip_checkpoint_on_close(db.sqliteConnection)
        _ = keychain_sqlite_checkpoint_wal_after(db.sqliteConnection, 1000, Int32(DurableSQLite.busyTimeout * 1000), 0)
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE enrolment (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    record BLOB NOT NULL
                );
                CREATE TABLE zone_state (
                    zone TEXT PRIMARY KEY NOT NULL,
                    cursor INTEGER NOT NULL,
                    write_counter INTEGER NOT NULL,
                    next_batch_id INTEGER NOT NULL,
                    epoch INTEGER NOT NULL,
                    unanswered_batch BLOB,
                    journal_sequence INTEGER NOT NULL,
                    last_sync REAL
                );
                CREATE TABLE item_record (
                    zone TEXT NOT NULL,
                    item TEXT NOT NULL,
                    vector TEXT NOT NULL,
                    deleted INTEGER NOT NULL,
                    sealed BLOB NOT NULL,
                    pending INTEGER NOT NULL,
                    baseline TEXT NOT NULL,
                    seen TEXT NOT NULL,
                    PRIMARY KEY (zone, item)
                );
                CREATE TABLE problem (
                    zone TEXT NOT NULL,
                    item TEXT NOT NULL,
                    reason TEXT NOT NULL,
                    at REAL NOT NULL,
                    PRIMARY KEY (zone, item)
                );
                """)
        }
        migrator.registerMigration("v2 refusal") { db in
            // Why a pending version was set aside instead of pushed (decision 0105).
            try db.execute(sql: "ALTER TABLE item_record ADD COLUMN refusal TEXT")
        }
        registerDeviceLogMigration(in: &migrator)
        registerHeldArrivalMigration(in: &migrator)
        registerStatementMigration(in: &migrator)
        registerSequenceMigration(in: &migrator)
        registerDeletedBaselineMigration(in: &migrator)
        registerMayBeOnServerMigration(in: &migrator)
        registerHeldArrivalKeyMigration(in: &migrator)
        registerPublishedStatementMigration(in: &migrator)
        registerStatedEpochMigration(in: &migrator)
        registerChangesTakenMigration(in: &migrator)
        registerClockAnchorMigration(in: &migrator)
        registerAppliesCoveredMigration(in: &migrator)
        registerZoneViewMigration(in: &migrator)
        registerExcusedWritesMigration(in: &migrator)
        return migrator
    }

    func write<T>(_ body: (Database) throws -> T) throws(SyncClientError) -> T {
        do {
            return try queue.write(body)
        } catch let error as SyncClientError {
            throw error
        } catch {
            throw SyncClientError(.localStorage, "cannot write the sync state", underlying: error)
        }
    }

    func read<T>(_ body: (Database) throws -> T) throws(SyncClientError) -> T {
        do {
            return try queue.read(body)
        } catch let error as SyncClientError {
            throw error
        } catch {
            throw SyncClientError(.localStorage, "cannot read the sync state", underlying: error)
        }
    }

    // MARK: - Enrolment

    /// The enrolment, or nil before one.
    package func enrolment() throws(SyncClientError) -> Enrolment? {
        try read { db in
            guard let data = try Data.fetchOne(db, sql: "SELECT record FROM enrolment WHERE id = 1") else { return nil }
            return try JSONDecoder().decode(Enrolment.self, from: data)
        }
    }

    /// Stores the enrolment.
    package func saveEnrolment(_ enrolment: Enrolment) throws(SyncClientError) {
        try write { db in
            let data = try JSONEncoder().encode(enrolment)
            try db.execute(sql: "INSERT OR REPLACE INTO enrolment (id, record) VALUES (1, ?)", arguments: [data])
        }
    }

    // MARK: - Problems

    /// One item that does not sync: a pulled version that was rejected and not applied, or a local
    /// version set aside because the server will not take it.
    package struct Problem: Sendable, Equatable, Codable {
        package var item: String
        package var reason: String
        package var at: Date
        /// What the item is, when `status` could tell (never stored: found from the keychain).
        package var name: String?
    }

    /// The unresolved problems of `zone`.
    package func problems(zone: ZoneID) throws(SyncClientError) -> [Problem] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT item, reason, at FROM problem WHERE zone = ? ORDER BY at", arguments: [zone.rawValue]).map {
                var problem = Problem(item: $0[0], reason: $0[1], at: Date(timeIntervalSince1970: $0[2]))
                // Not an item: named here, for every zone alike (decision 0180).
                if problem.item == Self.accountStateProblem.rawValue { problem.name = Self.accountStateProblemName }
                return problem
            }
        }
    }

    func recordProblem(_ db: Database, zone: ZoneID, item: ItemID, reason: String) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO problem (zone, item, reason, at) VALUES (?, ?, ?, ?)")
            .execute(arguments: [zone.rawValue, item.rawValue, reason, Date().timeIntervalSince1970])
    }

    func clearProblem(_ db: Database, zone: ZoneID, item: ItemID) throws {
        // Cached: a page's commit clears the problem of every item it applied (decision 0232).
        try db.cachedStatement(sql: "DELETE FROM problem WHERE zone = ? AND item = ?").execute(arguments: [zone.rawValue, item.rawValue])
    }
}

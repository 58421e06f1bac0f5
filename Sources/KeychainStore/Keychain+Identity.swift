import GRDB
import KeychainModel

extension Keychain {
    /// What a database says it is, read when a keychain opens: its application ID and schema
    /// version, and whether it has tables and class keys.
    struct Identity {
        var applicationID: Int32
        var userVersion: Int32
        var hasTables: Bool
        var hasClassKeys: Bool

        /// Reads the identity with one statement, and a second for the class keys of a keychain
        /// of this version, each atomic by itself (no transaction), read column by column.
        init(_ db: Database) throws {
            let header = try Self.integers(db, "SELECT (SELECT application_id FROM pragma_application_id), (SELECT user_version FROM pragma_user_version), EXISTS (SELECT 1 FROM sqlite_master)")
            applicationID = Int32(truncatingIfNeeded: header[0])
            userVersion = Int32(truncatingIfNeeded: header[1])
            hasTables = header[2] != 0
            // A database of this version has the class_key table (created by its first migration).
            hasClassKeys = applicationID == Schema.applicationID && userVersion == Schema.version
                ? try Self.integers(db, "SELECT EXISTS (SELECT 1 FROM class_key)")[0] != 0
                : false
        }

        /// The integer columns of the one row `sql` returns.
        private static func integers(_ db: Database, _ sql: String) throws -> [Int64] {
            let statement = try db.makeStatement(sql: sql)
            let columns = RawColumns(statement: statement.sqliteStatement)
            columns.bind([])
            defer { columns.finish() }
            guard try columns.step(db) else { throw KeychainError(.notAvailable, "the keychain file is corrupt") }
            return (0..<columns.count).map(columns.int64)
        }

        /// A keychain of this version with its class keys: nothing to create or migrate.
        var isComplete: Bool {
            applicationID == Schema.applicationID && userVersion == Schema.version && hasClassKeys
        }

        /// Refuses a database of another application, or of a newer version of this one.
        func check() throws(KeychainError) {
            if applicationID != Schema.applicationID && hasTables {
                throw KeychainError(.notAvailable, "the file is not a keychain (a database of another application)")
            }
            if userVersion > Schema.version {
                throw KeychainError(.notAvailable, "the keychain was created by a newer version")
            }
        }
    }
}

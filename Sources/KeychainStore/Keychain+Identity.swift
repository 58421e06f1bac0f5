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

        /// Reads the identity with four small statements and no transaction (each is atomic).
        init(_ db: Database) throws {
            applicationID = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
            userVersion = try Int32.fetchOne(db, sql: "PRAGMA user_version") ?? 0
            hasTables = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM sqlite_master)") ?? false
            // A database of this version has the class_key table (created by its first migration).
            hasClassKeys = applicationID == Schema.applicationID && userVersion == Schema.version
                ? try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM class_key)") ?? false
                : false
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

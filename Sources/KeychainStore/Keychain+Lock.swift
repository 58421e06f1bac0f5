import Crypto
import Foundation
import GRDB
import KeychainModel

extension Keychain {
    /// The keychain's lock state as stored (shared by every process using the keychain).
    public struct LockStatus: Sendable, Hashable {
        /// True while locked.
        public var isLocked: Bool
        /// True when a passcode protects the "when unlocked" classes.
        public var hasPasscode: Bool
    }

    /// The current lock state.
    public func lockStatus() throws(KeychainError) -> LockStatus {
        try read { _, state in LockStatus(isLocked: state.locked, hasPasscode: state.passcodeSet) }
    }

    /// Locks the keychain for every process: "when unlocked" items answer "interaction not
    /// allowed" until ``unlock(passcode:)``. With a passcode set, the unlocked copies of the
    /// passcode class keys are erased, so only the passcode can bring them back.
    public func lock() throws(KeychainError) {
        try write { db, _ in
            try db.execute(sql: "DELETE FROM session_key")
            try db.execute(sql: "UPDATE keychain_state SET locked = 1, generation = generation + 1 WHERE id = 1")
        }
        try truncateWriteAheadLog()
        configuration.logger.info("keychain locked")
    }

    /// Unlocks the keychain for every process.
    /// - Parameter passcode: The passcode; required when one is set, ignored otherwise.
    /// - Throws: ``KeychainStatus/authFailed`` for a wrong or missing passcode.
    public func unlock(passcode: String?) throws(KeychainError) {
        try write { db, state in
            if state.passcodeSet {
                guard let passcode else { throw KeychainError(.authFailed, "a passcode is required") }
                let keys = try passcodeClassKeys(db, passcode: passcode)
                try storeSession(db, keys)
            }
            try db.execute(sql: "UPDATE keychain_state SET locked = 0, generation = generation + 1 WHERE id = 1")
        }
        configuration.logger.info("keychain unlocked")
    }

    /// Sets or changes the passcode. Afterwards the keychain is unlocked.
    /// - Parameters:
    ///   - passcode: The new passcode (not empty).
    ///   - current: The current passcode; required when one is set. Without one, the keychain
    ///     must be unlocked.
    /// - Throws: ``KeychainStatus/authFailed`` for a wrong current passcode,
    ///   ``KeychainStatus/interactionNotAllowed`` when locked without a passcode.
    public func setPasscode(_ passcode: String, current: String?) throws(KeychainError) {
        guard !passcode.isEmpty else { throw KeychainError(.param, "the passcode must not be empty") }
        let parameters = configuration.passcodeParameters
        try write { db, state in
            var keys: [ProtectionClass: SymmetricKey] = [:]
            if state.passcodeSet {
                guard let current else { throw KeychainError(.authFailed, "the current passcode is required") }
                keys = try passcodeClassKeys(db, passcode: current)
            } else {
                guard !state.locked else { throw KeychainError(.interactionNotAllowed) }
                for protectionClass in ProtectionClass.allCases where protectionClass.isLockedWithKeychain {
                    keys[protectionClass] = try state.key(for: protectionClass)
                }
            }
            let salt = Array(SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) })
            let wrappingKey = try PasscodeKey.derive(passcode: passcode, salt: salt, parameters: parameters, deviceKey: deviceKey)
            for (protectionClass, key) in keys {
                let wrapped = try SecretSealer.sealKey(key, with: wrappingKey, context: KeyState.passcodeContext(protectionClass))
                try db.execute(
                    sql: "UPDATE class_key SET device_wrapped = NULL, passcode_wrapped = ? WHERE protection_class = ?",
                    arguments: [wrapped, protectionClass.rawValue])
            }
            try storeSession(db, keys)
            try db.execute(
                sql: """
                    UPDATE keychain_state SET locked = 0, generation = generation + 1, passcode_salt = ?,
                    passcode_rounds = ?, passcode_block_size = ?, passcode_parallelism = ? WHERE id = 1
                    """,
                arguments: [Data(salt), parameters.rounds, parameters.blockSize, parameters.parallelism])
        }
        try truncateWriteAheadLog()
        configuration.logger.info("keychain passcode set")
    }

    /// Derives the passcode key (scrypt, once) and opens the passcode classes' keys with it.
    private func passcodeClassKeys(_ db: Database, passcode: String) throws -> [ProtectionClass: SymmetricKey] {
        guard let row = try Row.fetchOne(
            db, sql: "SELECT passcode_salt, passcode_rounds, passcode_block_size, passcode_parallelism FROM keychain_state WHERE id = 1")
        else { throw KeychainError(.notAvailable, "the keychain file is corrupt") }
        let parameters = PasscodeKey.Parameters(rounds: row[1], blockSize: row[2], parallelism: row[3])
        let wrappingKey = try PasscodeKey.derive(
            passcode: passcode, salt: Array(row[0] as Data), parameters: parameters, deviceKey: deviceKey)
        var keys: [ProtectionClass: SymmetricKey] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT protection_class, passcode_wrapped FROM class_key WHERE passcode_wrapped IS NOT NULL") {
            guard let protectionClass = ProtectionClass(rawValue: row[0]) else { continue }
            keys[protectionClass] = try SecretSealer.openKey(row[1], with: wrappingKey, context: KeyState.passcodeContext(protectionClass))
        }
        return keys
    }

    /// Keeps device-key-wrapped copies of the passcode classes' keys while unlocked.
    private func storeSession(_ db: Database, _ keys: [ProtectionClass: SymmetricKey]) throws {
        try db.execute(sql: "DELETE FROM session_key")
        for (protectionClass, key) in keys {
            try db.execute(
                sql: "INSERT INTO session_key (protection_class, device_wrapped) VALUES (?, ?)",
                arguments: [protectionClass.rawValue, try SecretSealer.sealKey(key, with: deviceKey, context: KeyState.sessionContext(protectionClass))])
        }
    }

    /// Checkpoints and empties the WAL, so no old page (such as an erased session key) stays there.
    private func truncateWriteAheadLog() throws(KeychainError) {
        do {
            try database.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
        } catch {
            throw Self.mapped(error)
        }
    }
}

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

    /// Whether items of `accessibility` can be written and read now: false while its class key
    /// is locked away. The sync client holds pulled items it cannot write until this turns true
    /// (decision 0137).
    /// - Throws: ``KeychainError`` when the key state cannot be read.
    public func isAvailable(_ accessibility: Accessibility) throws(KeychainError) -> Bool {
        try !unavailableProtectionClasses().contains(accessibility.protectionClass)
    }

    /// The protection classes whose items cannot be written or read now (their class key is
    /// locked away), in one read: empty while the keychain is unlocked.
    /// - Throws: ``KeychainError`` when the key state cannot be read.
    public func unavailableProtectionClasses() throws(KeychainError) -> Set<ProtectionClass> {
        try read { _, state in Set(ProtectionClass.allCases.filter { (try? state.key(for: $0)) == nil }) }
    }

    /// Locks the keychain for every process: "when unlocked" items answer "interaction not
    /// allowed" until ``unlock(passcode:)``. With a passcode set, the unlocked copies of the
    /// "when unlocked" class keys are erased, so only the passcode can bring them back; the
    /// "after first unlock" one stays (decision 0136).
    public func lock() throws(KeychainError) {
        try write { db, state in
            try db.execute(sql: "DELETE FROM session_key")  // where versions before 0136 kept them
            try db.execute(sql: "UPDATE keychain_state SET locked = 1, generation = generation + 1 WHERE id = 1")
            if state.passcodeSet {
                try session.store(state.keys.filter { $0.key.isProtectedByPasscode && !$0.key.isLockedWithKeychain }, deviceKey: deviceKey)
            }
        }
        try truncateWriteAheadLog()
        configuration.logger.info("keychain locked")
    }

    /// Unlocks the keychain for every process.
    /// - Parameter passcode: The passcode; required when one is set, ignored otherwise.
    /// - Throws: ``KeychainStatus/authFailed`` for a wrong or missing passcode.
    public func unlock(passcode: String?) throws(KeychainError) {
        let derived = try passcode.flatMap { passcode throws(KeychainError) in try derivePasscodeKey(passcode) }
        try write { db, state in
            if state.passcodeSet {
                guard let passcode else { throw KeychainError(.authFailed, "a passcode is required") }
                let (wrappingKey, opened) = try passcodeClassKeys(db, passcode: passcode, derived: derived)
                var keys = opened
                // A keychain whose passcode was set before decision 0136 has its "after first
                // unlock" key still wrapped by the device key alone: the passcode wraps it now.
                for protectionClass in ProtectionClass.allCases where protectionClass.isProtectedByPasscode && keys[protectionClass] == nil {
                    guard let key = state.keys[protectionClass] else { continue }
                    try wrap(db, key, of: protectionClass, with: wrappingKey)
                    keys[protectionClass] = key
                }
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
        // Both derivations run before the write transaction (decision 0191).
        let derivedCurrent = try current.flatMap { current throws(KeychainError) in try derivePasscodeKey(current) }
        let salt = Array(SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) })
        let wrappingKey = try PasscodeKey.derive(passcode: passcode, salt: salt, parameters: parameters, deviceKey: deviceKey)
        try write { db, state in
            var keys: [ProtectionClass: SymmetricKey] = [:]
            if state.passcodeSet {
                guard let current else { throw KeychainError(.authFailed, "the current passcode is required") }
                keys = try passcodeClassKeys(db, passcode: current, derived: derivedCurrent).keys
            } else {
                guard !state.locked else { throw KeychainError(.interactionNotAllowed) }
            }
            // Every class the passcode protects (a key set before 0136 may still be device-wrapped).
            for protectionClass in ProtectionClass.allCases where protectionClass.isProtectedByPasscode && keys[protectionClass] == nil {
                keys[protectionClass] = try state.key(for: protectionClass)
            }
            for (protectionClass, key) in keys {
                try wrap(db, key, of: protectionClass, with: wrappingKey)
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

    /// The passcode key derived outside any transaction (decision 0191): scrypt takes a tenth of
    /// a second or more, and no other writer (the sync daemon's applies, the Secret Service) waits
    /// for it. Nil when no passcode is set. The salt and parameters it was derived with come along,
    /// so the write that uses it can tell that the passcode did not change meanwhile.
    private func derivePasscodeKey(_ passcode: String) throws(KeychainError) -> PasscodeKey.Derived? {
        guard let stored = try readWithoutState({ db in try Self.storedPasscodeParameters(db) }) else { return nil }
        return PasscodeKey.Derived(
            salt: stored.salt, parameters: stored.parameters,
            key: try PasscodeKey.derive(passcode: passcode, salt: stored.salt, parameters: stored.parameters, deviceKey: deviceKey))
    }

    /// The passcode's salt and scrypt parameters as stored; nil while no passcode is set.
    private static func storedPasscodeParameters(_ db: Database) throws -> (salt: [UInt8], parameters: PasscodeKey.Parameters)? {
        guard let row = try Row.fetchOne(
            db, sql: "SELECT passcode_salt, passcode_rounds, passcode_block_size, passcode_parallelism FROM keychain_state WHERE id = 1")
        else { throw KeychainError(.notAvailable, "the keychain file is corrupt") }
        guard let salt = row[0] as Data? else { return nil }
        return (Array(salt), PasscodeKey.Parameters(rounds: row[1], blockSize: row[2], parallelism: row[3]))
    }

    /// Opens the passcode classes' keys with the passcode key: `derived` when it was derived with
    /// the stored salt and parameters, else derived again here (the passcode changed between).
    private func passcodeClassKeys(
        _ db: Database, passcode: String, derived: PasscodeKey.Derived?
    ) throws -> (wrappingKey: SymmetricKey, keys: [ProtectionClass: SymmetricKey]) {
        guard let stored = try Self.storedPasscodeParameters(db) else {
            throw KeychainError(.notAvailable, "the keychain file is corrupt")
        }
        let wrappingKey = if let derived, derived.salt == stored.salt, derived.parameters == stored.parameters {
            derived.key
        } else {
            try PasscodeKey.derive(passcode: passcode, salt: stored.salt, parameters: stored.parameters, deviceKey: deviceKey)
        }
        var keys: [ProtectionClass: SymmetricKey] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT protection_class, passcode_wrapped FROM class_key WHERE passcode_wrapped IS NOT NULL") {
            guard let protectionClass = ProtectionClass(rawValue: row[0]) else { continue }
            keys[protectionClass] = try SecretSealer.openKey(row[1], with: wrappingKey, context: KeyState.passcodeContext(protectionClass))
        }
        return (wrappingKey, keys)
    }

    /// Wraps a class key with the passcode key alone: the device key no longer opens it.
    private func wrap(_ db: Database, _ key: SymmetricKey, of protectionClass: ProtectionClass, with wrappingKey: SymmetricKey) throws {
        let wrapped = try SecretSealer.sealKey(key, with: wrappingKey, context: KeyState.passcodeContext(protectionClass))
        try db.execute(
            sql: "UPDATE class_key SET device_wrapped = NULL, passcode_wrapped = ? WHERE protection_class = ?",
            arguments: [wrapped, protectionClass.rawValue])
    }

    /// Keeps the unlocked copies of the passcode classes' keys in the session file, outside the
    /// data directory (decision 0136); clears the table where versions before it kept them.
    private func storeSession(_ db: Database, _ keys: [ProtectionClass: SymmetricKey]) throws {
        try db.execute(sql: "DELETE FROM session_key")
        try session.store(keys, deviceKey: deviceKey)
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

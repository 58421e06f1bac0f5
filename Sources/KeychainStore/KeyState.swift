import Crypto
import Foundation
import GRDB
import KeychainModel

/// The class keys this process holds and the lock state they were loaded for.
///
/// Loaded once per open and again only when another process (or this one) bumps the state's
/// generation by locking, unlocking or changing the passcode, so no operation re-derives a key.
struct KeyState: Sendable {
    var generation: Int64
    var locked: Bool
    var passcodeSet: Bool
    var keys: [ProtectionClass: SymmetricKey]
    /// The metadata keys, from the "always" class key (nil only before the class keys exist).
    var metadataKeys: MetadataKeys?

    static let empty = KeyState(generation: -1, locked: true, passcodeSet: false, keys: [:])

    /// The metadata keys (decision 0280).
    var metadata: MetadataKeys {
        get throws(KeychainError) {
            guard let metadataKeys else { throw KeychainError(.notAvailable, "the keychain file is corrupt (no class keys)") }
            return metadataKeys
        }
    }

    /// The class key, or ``KeychainStatus/interactionNotAllowed`` while locked.
    func key(for protectionClass: ProtectionClass) throws(KeychainError) -> SymmetricKey {
        if locked && protectionClass.isLockedWithKeychain {
            throw KeychainError(.interactionNotAllowed)
        }
        guard let key = keys[protectionClass] else { throw KeychainError(.interactionNotAllowed) }
        return key
    }

    /// Whether a query may look at stored items at all. While locked, only a query limited to a
    /// class that stays available may run: any other answer (found or not) would reveal whether a
    /// "when unlocked" item exists.
    func mayTouch(_ query: Query) -> Bool {
        guard locked else { return true }
        guard let accessible = query.attributes.accessible else { return false }
        return !accessible.protectionClass.isLockedWithKeychain
    }

    static func deviceContext(_ protectionClass: ProtectionClass) -> String { "class-key device \(protectionClass.rawValue)" }
    static func passcodeContext(_ protectionClass: ProtectionClass) -> String { "class-key passcode \(protectionClass.rawValue)" }
    static func sessionContext(_ protectionClass: ProtectionClass) -> String { "class-key session \(protectionClass.rawValue)" }

    /// Reads the lock state and unwraps every class key the device key can open now: the
    /// device-wrapped ones, and with a passcode set the session's copies (decision 0136). With a
    /// passcode set and no "when unlocked" key in the session (the machine restarted), the
    /// keychain is locked whatever the file says.
    static func load(_ db: Database, deviceKey: SymmetricKey, session: SessionKeys) throws -> KeyState {
        // Read column by column (``RawColumns``), as the lookups are: every keychain process
        // loads its key state, and GRDB's row cursors cost more than the two statements.
        let stateRow = RawColumns(statement: try db.cachedStatement(sql: "SELECT generation, locked, passcode_salt FROM keychain_state WHERE id = 1").sqliteStatement)
        stateRow.bind([])
        defer { stateRow.finish() }
        guard try stateRow.step(db) else {
            throw KeychainError(.notAvailable, "the keychain file is corrupt")
        }
        var state = KeyState(generation: stateRow.int64(0), locked: stateRow.int64(1) != 0, passcodeSet: !stateRow.isNull(2), keys: [:])
        let keyRows = RawColumns(statement: try db.cachedStatement(sql: "SELECT protection_class, device_wrapped FROM class_key").sqliteStatement)
        keyRows.bind([])
        defer { keyRows.finish() }
        while try keyRows.step(db) {
            guard let protectionClass = ProtectionClass(rawValue: keyRows.text(0)), !keyRows.isNull(1) else { continue }
            state.keys[protectionClass] = try SecretSealer.openKey(keyRows.data(1), with: deviceKey, context: deviceContext(protectionClass))
        }
        state.metadataKeys = state.keys[.always].map(MetadataKeys.init(alwaysClassKey:))
        if state.passcodeSet {
            let unlocked = session.read(deviceKey: deviceKey)
            if unlocked[.whenUnlocked] == nil { state.locked = true }
            for (protectionClass, key) in unlocked where !(state.locked && protectionClass.isLockedWithKeychain) {
                state.keys[protectionClass] = key
            }
        }
        return state
    }

    /// Creates the class keys of a new keychain, each wrapped by the device key.
    static func hasClassKeys(_ db: Database) throws -> Bool {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM class_key") != 0
    }

    static func createClassKeys(_ db: Database, deviceKey: SymmetricKey) throws {
        guard try !hasClassKeys(db) else { return }
        for protectionClass in ProtectionClass.allCases {
            let wrapped = try SecretSealer.sealKey(SymmetricKey(size: .bits256), with: deviceKey, context: deviceContext(protectionClass))
            try db.execute(
                sql: "INSERT INTO class_key (protection_class, device_wrapped) VALUES (?, ?)",
                arguments: [protectionClass.rawValue, wrapped])
        }
    }
}

import Crypto
import Foundation
import KeychainModel

/// The at-rest sealing of secrets and keys (see docs/decisions/0011).
///
/// Every seal is AES-256-GCM with a random nonce; the associated data names what is sealed and
/// binds it to where it belongs, so no sealed value can be moved to another row or class.
enum SecretSealer {
    static let formatTag = Array("SKv1".utf8)

    /// A sealed secret and its wrapped per-item key.
    struct SealedSecret {
        var wrappedKey: Data
        var sealedData: Data
    }

    /// Seals `data` under a fresh per-item key and wraps that key with the class key.
    static func seal(_ data: [UInt8], identity: [UInt8], protectionClass: ProtectionClass, classKey: SymmetricKey)
        throws(KeychainError) -> SealedSecret
    {
        let itemKey = SymmetricKey(size: .bits256)
        do {
            let sealedData = try AES.GCM.seal(data, using: itemKey, authenticating: dataContext(identity)).combined!
            let wrappedKey = try wrap(itemKey, identity: identity, protectionClass: protectionClass, classKey: classKey)
            return SealedSecret(wrappedKey: wrappedKey, sealedData: sealedData)
        } catch {
            throw KeychainError(.decode, "sealing failed")
        }
    }

    /// Opens a sealed secret; a coarse ``KeychainStatus/decode`` error on any failure.
    static func open(_ sealed: SealedSecret, identity: [UInt8], protectionClass: ProtectionClass, classKey: SymmetricKey)
        throws(KeychainError) -> [UInt8]
    {
        do {
            let itemKey = try unwrapItemKey(sealed.wrappedKey, identity: identity, protectionClass: protectionClass, classKey: classKey)
            let box = try AES.GCM.SealedBox(combined: sealed.sealedData)
            return Array(try AES.GCM.open(box, using: itemKey, authenticating: dataContext(identity)))
        } catch {
            throw KeychainError(.decode, "stored item could not be decrypted")
        }
    }

    /// Re-wraps an item key for another protection class (accessibility change); data untouched.
    static func rewrap(_ wrappedKey: Data, identity: [UInt8], from old: ProtectionClass, oldKey: SymmetricKey,
                       to new: ProtectionClass, newKey: SymmetricKey) throws(KeychainError) -> Data
    {
        do {
            let itemKey = try unwrapItemKey(wrappedKey, identity: identity, protectionClass: old, classKey: oldKey)
            return try wrap(itemKey, identity: identity, protectionClass: new, classKey: newKey)
        } catch {
            throw KeychainError(.decode, "stored item could not be decrypted")
        }
    }

    /// Seals a key (class key or session copy) under a key-encryption key, bound to `context`.
    static func sealKey(_ key: SymmetricKey, with wrappingKey: SymmetricKey, context: String) throws(KeychainError) -> Data {
        do {
            return try key.withUnsafeBytes { bytes in
                try AES.GCM.seal(bytes, using: wrappingKey, authenticating: formatTag + Array(context.utf8)).combined!
            }
        } catch {
            throw KeychainError(.decode, "key sealing failed")
        }
    }

    /// Opens a key sealed by ``sealKey(_:with:context:)``; ``KeychainStatus/authFailed`` on failure.
    static func openKey(_ sealed: Data, with wrappingKey: SymmetricKey, context: String) throws(KeychainError) -> SymmetricKey {
        do {
            let box = try AES.GCM.SealedBox(combined: sealed)
            return SymmetricKey(data: try AES.GCM.open(box, using: wrappingKey, authenticating: formatTag + Array(context.utf8)))
        } catch {
            throw KeychainError(.authFailed, "authentication failed")
        }
    }

    private static func wrap(_ itemKey: SymmetricKey, identity: [UInt8], protectionClass: ProtectionClass, classKey: SymmetricKey)
        throws -> Data
    {
        try itemKey.withUnsafeBytes { bytes in
            try AES.GCM.seal(bytes, using: classKey, authenticating: keyContext(identity, protectionClass)).combined!
        }
    }

    private static func unwrapItemKey(_ wrapped: Data, identity: [UInt8], protectionClass: ProtectionClass, classKey: SymmetricKey)
        throws -> SymmetricKey
    {
        let box = try AES.GCM.SealedBox(combined: wrapped)
        return SymmetricKey(data: try AES.GCM.open(box, using: classKey, authenticating: keyContext(identity, protectionClass)))
    }

    private static func dataContext(_ identity: [UInt8]) -> [UInt8] {
        formatTag + Array("item-data".utf8) + identity
    }

    private static func keyContext(_ identity: [UInt8], _ protectionClass: ProtectionClass) -> [UInt8] {
        formatTag + Array("item-key".utf8) + Array(protectionClass.rawValue.utf8) + identity
    }
}

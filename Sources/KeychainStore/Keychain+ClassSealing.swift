import Crypto
import Foundation
import KeychainModel

extension Keychain {
    /// Bytes sealed under a protection class's key by ``sealWithClassKey(_:protectionClass:context:)``:
    /// a per-value key wrapped by the class key, and the bytes sealed with it.
    public struct ClassSealed: Sendable, Hashable {
        /// The per-value key, wrapped by the class key (AES key wrap).
        public var wrappedKey: Data
        /// The bytes, sealed with the per-value key (AES-256-GCM, nonce and tag included).
        public var sealedData: Data

        public init(wrappedKey: Data, sealedData: Data) {
            self.wrappedKey = wrappedKey
            self.sealedData = sealedData
        }
    }

    /// Seals `bytes` under the current key of `protectionClass`, bound to `context` (what the bytes
    /// are and where they belong, such as a state file's record of one item): the sync state keeps
    /// its copies of an item under the item's own class this way (decisions 0216, 0237). While that
    /// class is locked away (a "when unlocked" class while the keychain is locked) it cannot be sealed.
    /// - Throws: ``KeychainStatus/interactionNotAllowed`` while the class key is locked away.
    public func sealWithClassKey(_ bytes: [UInt8], protectionClass: ProtectionClass, context: [UInt8])
        throws(KeychainError) -> ClassSealed
    {
        try classKey(protectionClass).seal(bytes, context: context)
    }

    /// Opens bytes sealed by ``sealWithClassKey(_:protectionClass:context:)`` with the same class and
    /// context.
    /// - Throws: ``KeychainStatus/interactionNotAllowed`` while the class key is locked away;
    ///   ``KeychainStatus/decode`` when the bytes were not sealed so (another class, another
    ///   context, altered).
    public func openWithClassKey(_ sealed: ClassSealed, protectionClass: ProtectionClass, context: [UInt8])
        throws(KeychainError) -> [UInt8]
    {
        try classKey(protectionClass).open(sealed, context: context)
    }

    /// The key of `protectionClass`, read now, to seal and open many values with one read of the
    /// key state (a state commit's copies).
    /// - Throws: ``KeychainStatus/interactionNotAllowed`` while the class key is locked away.
    public func classKey(_ protectionClass: ProtectionClass) throws(KeychainError) -> ClassKey {
        ClassKey(protectionClass: protectionClass, key: try read { _, state in try state.key(for: protectionClass) })
    }

    /// The keys of the classes a lock takes away that are readable now, in one read: empty while
    /// the keychain is locked.
    public func unlockedClassKeys() throws(KeychainError) -> [ProtectionClass: ClassKey] {
        try read { _, state in
            var keys: [ProtectionClass: ClassKey] = [:]
            for protectionClass in ProtectionClass.allCases where protectionClass.isLockedWithKeychain {
                if let key = try? state.key(for: protectionClass) { keys[protectionClass] = ClassKey(protectionClass: protectionClass, key: key) }
            }
            return keys
        }
    }

    /// A protection class's key as read at one moment: it seals and opens as
    /// ``sealWithClassKey(_:protectionClass:context:)`` does, without reading the key state again.
    /// Keep it no longer than the work it was read for: a lock does not take it back.
    public struct ClassKey: Sendable {
        public let protectionClass: ProtectionClass
        let key: SymmetricKey

        /// Seals `bytes` bound to `context`.
        public func seal(_ bytes: [UInt8], context: [UInt8]) throws(KeychainError) -> ClassSealed {
            let sealed = try SecretSealer.seal(bytes, identity: Keychain.classSealingIdentity(context), protectionClass: protectionClass, classKey: key)
            return ClassSealed(wrappedKey: sealed.wrappedKey, sealedData: sealed.sealedData)
        }

        /// Opens bytes sealed with this class and `context`.
        /// - Throws: ``KeychainStatus/decode`` when they were not sealed so.
        public func open(_ sealed: ClassSealed, context: [UInt8]) throws(KeychainError) -> [UInt8] {
            guard let bytes = try SecretSealer.open(
                SecretSealer.SealedSecret(wrappedKey: sealed.wrappedKey, sealedData: sealed.sealedData),
                identity: Keychain.classSealingIdentity(context), protectionClass: protectionClass, classKey: key)
            else { throw KeychainError(.decode, "the sealed value is empty") }
            return bytes
        }
    }

    /// The identity a class-sealed value is bound to: a tag no row identity starts with (a row's
    /// identity is its primary key's encoding, which begins with the item class), then the context.
    fileprivate static func classSealingIdentity(_ context: [UInt8]) -> [UInt8] {
        Array("class-sealed:".utf8) + context
    }
}

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
    /// its copies of an item under the item's own class this way (decision 0216). While that class
    /// is locked away (a "when unlocked" class while the keychain is locked) it cannot be sealed.
    /// - Throws: ``KeychainStatus/interactionNotAllowed`` while the class key is locked away.
    public func sealWithClassKey(_ bytes: [UInt8], protectionClass: ProtectionClass, context: [UInt8])
        throws(KeychainError) -> ClassSealed
    {
        let classKey = try read { _, state in try state.key(for: protectionClass) }
        let sealed = try SecretSealer.seal(bytes, identity: Self.classSealingIdentity(context), protectionClass: protectionClass, classKey: classKey)
        return ClassSealed(wrappedKey: sealed.wrappedKey, sealedData: sealed.sealedData)
    }

    /// Opens bytes sealed by ``sealWithClassKey(_:protectionClass:context:)`` with the same class and
    /// context.
    /// - Throws: ``KeychainStatus/interactionNotAllowed`` while the class key is locked away;
    ///   ``KeychainStatus/decode`` when the bytes were not sealed so (another class, another
    ///   context, altered).
    public func openWithClassKey(_ sealed: ClassSealed, protectionClass: ProtectionClass, context: [UInt8])
        throws(KeychainError) -> [UInt8]
    {
        let classKey = try read { _, state in try state.key(for: protectionClass) }
        guard let bytes = try SecretSealer.open(
            SecretSealer.SealedSecret(wrappedKey: sealed.wrappedKey, sealedData: sealed.sealedData),
            identity: Self.classSealingIdentity(context), protectionClass: protectionClass, classKey: classKey)
        else { throw KeychainError(.decode, "the sealed value is empty") }
        return bytes
    }

    /// The identity a class-sealed value is bound to: a tag no row identity starts with (a row's
    /// identity is its primary key's encoding, which begins with the item class), then the context.
    private static func classSealingIdentity(_ context: [UInt8]) -> [UInt8] {
        Array("class-sealed:".utf8) + context
    }
}

import Crypto
import Foundation
import KeychainModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The at-rest sealing of secrets and keys (see docs/decisions/0011).
///
/// Secrets and class keys are sealed with AES-256-GCM and a random nonce; the associated data
/// names what is sealed and binds it to where it belongs (row identity and protection class), so
/// no sealed value can be moved to another row or class. Per-item keys are wrapped with AES key
/// wrap (RFC 3394) under the class key: authenticated, deterministic, and cheaper to open than a
/// second GCM box on every lookup.
enum SecretSealer {
    static let formatTag = Array("SKv1".utf8)

    /// A sealed secret and its wrapped per-item key.
    struct SealedSecret: Sendable {
        var wrappedKey: Data
        var sealedData: Data
    }

    /// An item added without data (Apple's dictionary then has no data key): empty columns,
    /// nothing sealed, so no secret to protect (docs/decisions/0161).
    static let noData = SealedSecret(wrappedKey: Data(), sealedData: Data())

    /// Seals `data` under a fresh per-item key and wraps that key with the class key; no data
    /// gives ``noData``.
    static func seal(_ data: [UInt8]?, identity: [UInt8], protectionClass: ProtectionClass, classKey: SymmetricKey)
        throws(KeychainError) -> SealedSecret
    {
        guard let data else { return noData }
        // One draw from the system's random source for the item key and the nonce: each separate
        // draw is a system call, and adds are a hot path.
        var random = RandomBytes(count: 32 + 12)
        defer { random.wipe() }
        let itemKey = SymmetricKey(data: random.bytes[0..<32])
        do {
            let nonce = try AES.GCM.Nonce(data: random.bytes[32..<44])
            let sealedData = try AES.GCM.seal(
                data, using: itemKey, nonce: nonce, authenticating: dataContext(identity, protectionClass)).combined!
            let wrappedKey = try AES.KeyWrap.wrap(itemKey, using: classKey)
            return SealedSecret(wrappedKey: wrappedKey, sealedData: sealedData)
        } catch {
            throw KeychainError(.decode, "sealing failed")
        }
    }

    /// Opens a sealed secret (nil for ``noData``); a coarse ``KeychainStatus/decode`` error on
    /// any failure.
    static func open(_ sealed: SealedSecret, identity: [UInt8], protectionClass: ProtectionClass, classKey: SymmetricKey)
        throws(KeychainError) -> [UInt8]?
    {
        if sealed.wrappedKey.isEmpty && sealed.sealedData.isEmpty { return nil }
        do {
            let itemKey = try AES.KeyWrap.unwrap(sealed.wrappedKey, using: classKey)
            let box = try AES.GCM.SealedBox(combined: sealed.sealedData)
            return Array(try AES.GCM.open(box, using: itemKey, authenticating: dataContext(identity, protectionClass)))
        } catch {
            throw KeychainError(.decode, "stored item could not be decrypted")
        }
    }

    /// Reseals a secret for another protection class (an accessibility change): the secret's
    /// associated data names its class, so it is opened and sealed again under a fresh item key.
    static func reseal(_ sealed: SealedSecret, identity: [UInt8], from old: ProtectionClass, oldKey: SymmetricKey,
                       to new: ProtectionClass, newKey: SymmetricKey) throws(KeychainError) -> SealedSecret
    {
        let data = try open(sealed, identity: identity, protectionClass: old, classKey: oldKey)
        return try seal(data, identity: identity, protectionClass: new, classKey: newKey)
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

    private static let dataPrefixes = Dictionary(uniqueKeysWithValues: ProtectionClass.allCases.map {
        ($0, formatTag + Array("item-data".utf8) + Array($0.rawValue.utf8))
    })

    /// "SKv1" "item-data" ‖ class code ‖ row identity.
    private static func dataContext(_ identity: [UInt8], _ protectionClass: ProtectionClass) -> [UInt8] {
        dataPrefixes[protectionClass]! + identity
    }
}

/// Bytes from the operating system's random source, drawn in one call (`arc4random_buf`, which
/// glibc serves with a single getrandom call; the standard library's generator elsewhere).
struct RandomBytes {
    var bytes: [UInt8]

    init(count: Int) {
        bytes = [UInt8](repeating: 0, count: count)
        #if canImport(Glibc) || canImport(Darwin)
        bytes.withUnsafeMutableBytes { arc4random_buf($0.baseAddress!, $0.count) }
        #else
        var generator = SystemRandomNumberGenerator()
        for index in bytes.indices { bytes[index] = UInt8.random(in: .min ... .max, using: &generator) }
        #endif
    }

    /// Overwrites the bytes with zeros.
    mutating func wipe() {
        for index in bytes.indices { bytes[index] = 0 }
    }
}

import Crypto
import Foundation

/// A device's key-agreement key: an X-Wing (ML-KEM-768 + X25519) key pair made at enrolment, to
/// which an approving device wraps the account key (docs/decisions/0130). Post-quantum: a recorded
/// approval cannot be opened later by a quantum computer unless both ML-KEM and X25519 fall.
public struct DeviceAgreementKey: Sendable {
    let key: XWingMLKEM768X25519.PrivateKey

    /// A new random key pair.
    public static func generate() throws(CryptoError) -> DeviceAgreementKey {
        do {
            return DeviceAgreementKey(key: try XWingMLKEM768X25519.PrivateKey.generate())
        } catch {
            throw .internalFailure(error)
        }
    }

    private init(key: XWingMLKEM768X25519.PrivateKey) {
        self.key = key
    }

    /// Restores a key saved with ``seedRepresentation``.
    ///
    /// - Throws: ``CryptoError`` with code ``CryptoError/Code/invalidInput`` unless a 32-byte seed.
    public init(seedRepresentation seed: [UInt8]) throws(CryptoError) {
        guard seed.count == 32, let key = try? XWingMLKEM768X25519.PrivateKey(seedRepresentation: seed, publicKey: nil) else {
            throw .invalidInput("a device agreement key seed has 32 bytes")
        }
        self.key = key
    }

    /// The private key's 32-byte seed, a secret: only for the device's own protected storage.
    public var seedRepresentation: [UInt8] { Array(key.seedRepresentation) }

    /// The public key's bytes (1,216), as entered in the device log.
    public var publicKey: [UInt8] { Array(key.publicKey.rawRepresentation) }
}

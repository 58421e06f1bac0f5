import Crypto

/// A device's identity: an Ed25519 key pair made at enrolment. The private half stays in the
/// device's keychain (`ThisDeviceOnly`); the public half is entered in the account's device log and
/// verifies the device's statements (docs/decisions/0120).
public struct DeviceSigningKey: Sendable {
    private let key: Curve25519.Signing.PrivateKey

    /// A new random key pair.
    public static func generate() -> DeviceSigningKey {
        DeviceSigningKey(key: Curve25519.Signing.PrivateKey())
    }

    private init(key: Curve25519.Signing.PrivateKey) {
        self.key = key
    }

    /// Restores a key saved with ``rawRepresentation``.
    ///
    /// - Throws: ``CryptoError`` with code ``CryptoError/Code/invalidInput`` unless 32 bytes.
    public init(rawRepresentation bytes: [UInt8]) throws(CryptoError) {
        guard bytes.count == 32, let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: bytes) else {
            throw .invalidInput("a device signing key has 32 bytes")
        }
        self.key = key
    }

    /// The private key's 32 bytes, a secret: only for the device's own protected storage.
    public var rawRepresentation: [UInt8] { Array(key.rawRepresentation) }

    /// The public half.
    public var publicKey: DevicePublicKey { DevicePublicKey(key: key.publicKey) }

    /// An Ed25519 signature (64 bytes) of `message`.
    public func signature(for message: [UInt8]) throws(CryptoError) -> [UInt8] {
        do {
            return Array(try key.signature(for: message))
        } catch {
            throw .internalFailure(error)
        }
    }
}

/// The public half of a ``DeviceSigningKey``: 32 bytes, as entered in the device log.
public struct DevicePublicKey: Sendable, Hashable {
    fileprivate let key: Curve25519.Signing.PublicKey

    fileprivate init(key: Curve25519.Signing.PublicKey) {
        self.key = key
    }

    /// A public key read from its 32 bytes.
    ///
    /// - Throws: ``CryptoError`` with code ``CryptoError/Code/invalidInput`` for anything else.
    public init(rawRepresentation bytes: some Collection<UInt8>) throws(CryptoError) {
        guard bytes.count == 32, let key = try? Curve25519.Signing.PublicKey(rawRepresentation: Array(bytes)) else {
            throw .invalidInput("a device public key has 32 bytes")
        }
        self.key = key
    }

    /// The key's 32 bytes.
    public var rawRepresentation: [UInt8] { Array(key.rawRepresentation) }

    /// Whether `signature` is this key's signature of `message` (a signature found valid before
    /// in this process is not verified again: ``VerifiedSignatures``).
    public func isValidSignature(_ signature: some Collection<UInt8>, for message: [UInt8]) -> Bool {
        guard signature.count == 64 else { return false }
        let signature = Array(signature)
        return VerifiedSignatures.check(publicKey: rawRepresentation, signature: signature, message: message) {
            key.isValidSignature(signature, for: message)
        }
    }

    public static func == (lhs: DevicePublicKey, rhs: DevicePublicKey) -> Bool {
        lhs.rawRepresentation == rhs.rawRepresentation
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(rawRepresentation)
    }
}

import Crypto
import CryptoExtras
import Foundation

/// What a password yields: scrypt turns it into a master secret, and HKDF splits that into the
/// auth key (sent to the server at sign-in) and the wrapping key (never leaves the device).
public struct AccountSecrets: Sendable {
    /// The parameters the secrets were derived with.
    public let parameters: KDFParameters
    /// The wrapping key, which wraps the account key. It never leaves the device.
    public let wrappingKey: SymmetricKey
    private let authSecret: SymmetricKey

    /// The auth key's 32 bytes, to send to the server at sign-in (the server stores only an
    /// ``AuthKeyVerifier``).
    public var authKey: [UInt8] { authSecret.bytes }

    /// Derives the secrets of `password` (normalised to Unicode NFC, then UTF-8).
    ///
    /// Takes about as long as scrypt with `parameters` (about a second at the defaults).
    /// - Throws: ``CryptoError`` with code ``CryptoError/Code/unsupportedParameters`` when the
    ///   parameters fail ``KDFParameters/validate()``.
    public static func derive(password: String, parameters: KDFParameters) throws(CryptoError) -> AccountSecrets {
        try parameters.validate()
        let master = try masterSecret(password: Array(password.precomposedStringWithCanonicalMapping.utf8), parameters: parameters)
        return AccountSecrets(master: master, parameters: parameters)
    }

    /// The secrets of a known master secret, without the floor check: for tests only.
    package init(masterSecret: [UInt8], parameters: KDFParameters) {
        self.init(master: SymmetricKey(data: masterSecret), parameters: parameters)
    }

    private init(master: SymmetricKey, parameters: KDFParameters) {
        self.parameters = parameters
        self.authSecret = KeyPurpose.auth.derive(from: master)
        self.wrappingKey = KeyPurpose.wrap.derive(from: master)
    }

    /// scrypt of the password bytes under `parameters`, 32 bytes, without the floor check.
    package static func masterSecret(password: [UInt8], parameters: KDFParameters) throws(CryptoError) -> SymmetricKey {
        try scrypt(password: password, parameters: parameters, outputByteCount: 32)
    }

    /// Raw scrypt, for the master secret and for known-answer tests against RFC 7914.
    package static func scrypt(password: [UInt8], parameters: KDFParameters, outputByteCount: Int) throws(CryptoError) -> SymmetricKey {
        guard parameters.algorithm == KDFParameters.scryptAlgorithm else { throw .unsupportedParameters("unknown KDF") }
        do {
            return try KDF.Scrypt.deriveKey(
                from: password, salt: parameters.salt, outputByteCount: outputByteCount,
                rounds: parameters.n, blockSize: Int(parameters.r), parallelism: Int(parameters.p)
            )
        } catch {
            throw .internalFailure(error)
        }
    }
}

import Crypto
import CryptoExtras
import Foundation

/// What the server stores instead of an account's auth key: a salted PBKDF2-HMAC-SHA256 hash of it.
///
/// The auth key is 256 bits of scrypt output, so nobody can guess it; the hash exists so that a
/// stolen server database cannot be replayed to sign in. A moderate cost (``defaultRounds``) is
/// enough for that and keeps sign-in cheap for the server (docs/decisions/0022).
///
/// Encoding: `version (1) = 0x01 ‖ algorithm (1) = 0x01 (PBKDF2-HMAC-SHA256) ‖ rounds (4,
/// big-endian) ‖ salt (16) ‖ hash (32)`, 54 bytes.
public struct AuthKeyVerifier: Sendable {
    /// The PBKDF2 iteration count of new verifiers.
    public static let defaultRounds: UInt32 = 20_000
    /// The iteration counts a stored verifier may have.
    public static let roundsRange: ClosedRange<UInt32> = 1_000...10_000_000

    private static let version: UInt8 = 1
    private static let pbkdf2SHA256: UInt8 = 1
    private static let saltByteCount = 16
    private static let hashByteCount = 32
    private static let encodedByteCount = 1 + 1 + 4 + saltByteCount + hashByteCount

    private let rounds: UInt32
    private let salt: [UInt8]
    private let hash: SymmetricKey

    /// A verifier of `authKey` with a fresh random salt.
    public static func make(authKey: some DataProtocol) -> AuthKeyVerifier {
        make(authKey: authKey, salt: SymmetricKey(size: .bits128).bytes, rounds: defaultRounds)
    }

    /// A verifier with a given salt and cost: for known-answer tests.
    package static func make(authKey: some DataProtocol, salt: [UInt8], rounds: UInt32) -> AuthKeyVerifier {
        AuthKeyVerifier(rounds: rounds, salt: salt, hash: hash(authKey, salt: salt, rounds: rounds))
    }

    private init(rounds: UInt32, salt: [UInt8], hash: SymmetricKey) {
        self.rounds = rounds
        self.salt = salt
        self.hash = hash
    }

    /// Restores a stored verifier.
    ///
    /// - Throws: ``CryptoError`` with code ``CryptoError/Code/invalidInput`` when the bytes are not
    ///   a verifier this version understands.
    public init(encoded: some DataProtocol) throws(CryptoError) {
        let bytes = [UInt8](encoded)
        var reader = ByteReader(bytes[...])
        guard bytes.count == Self.encodedByteCount,
            reader.readBigEndian(UInt8.self) == Self.version,
            reader.readBigEndian(UInt8.self) == Self.pbkdf2SHA256,
            let rounds = reader.readBigEndian(UInt32.self), Self.roundsRange.contains(rounds),
            let salt = reader.read(count: Self.saltByteCount),
            let hash = reader.read(count: Self.hashByteCount)
        else { throw .invalidInput("malformed auth key verifier") }
        self.init(rounds: rounds, salt: Array(salt), hash: SymmetricKey(data: hash))
    }

    /// The bytes to store.
    public var encoded: [UInt8] {
        var bytes: [UInt8] = [Self.version, Self.pbkdf2SHA256]
        bytes.reserveCapacity(Self.encodedByteCount)
        bytes.appendBigEndian(rounds)
        bytes.append(contentsOf: salt)
        bytes.append(contentsOf: hash.bytes)
        return bytes
    }

    /// Whether `authKey` is the key this verifier was made from; the hashes are compared in
    /// constant time.
    public func matches(authKey: some DataProtocol) -> Bool {
        // SymmetricKey's == compares in constant time.
        Self.hash(authKey, salt: salt, rounds: rounds) == hash
    }

    private static func hash(_ authKey: some DataProtocol, salt: [UInt8], rounds: UInt32) -> SymmetricKey {
        do {
            return try KDF.Insecure.PBKDF2.deriveKey(
                from: authKey, salt: salt, using: .sha256, outputByteCount: hashByteCount, unsafeUncheckedRounds: Int(rounds)
            )
        } catch {
            // BoringSSL's PBKDF2 fails only on allocation failure; there is no sensible recovery.
            preconditionFailure("PBKDF2 failed")
        }
    }
}

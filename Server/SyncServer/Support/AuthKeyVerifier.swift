import Crypto
import CryptoExtras
import Foundation

// STAND-IN until KeychainCrypto's `AuthKeyVerifier` (branch `crypto`) lands on main: same names,
// same behaviour (salted PBKDF2-HMAC-SHA256, constant-time match), same encoding. Delete this file
// then; nothing else changes.

/// What the server stores instead of an account's auth key: a salted slow hash of it.
struct AuthKeyVerifier: Sendable {
    private static let rounds: UInt32 = 20_000
    private static let header: [UInt8] = [1, 1]
    private let rounds: UInt32
    private let salt: [UInt8]
    private let hash: SymmetricKey

    static func make(authKey: some DataProtocol) -> AuthKeyVerifier {
        let salt = SymmetricKey(size: .bits128).withUnsafeBytes { Array($0) }
        return AuthKeyVerifier(rounds: rounds, salt: salt, hash: hash(authKey, salt: salt, rounds: rounds))
    }

    private init(rounds: UInt32, salt: [UInt8], hash: SymmetricKey) {
        self.rounds = rounds
        self.salt = salt
        self.hash = hash
    }

    init(encoded: some DataProtocol) throws {
        let bytes = [UInt8](encoded)
        guard bytes.count == 54, Array(bytes[0..<2]) == Self.header else {
            throw SyncServerError(.storageFailure, "malformed auth key verifier")
        }
        let rounds = bytes[2..<6].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard (1_000...10_000_000).contains(rounds) else { throw SyncServerError(.storageFailure, "malformed auth key verifier") }
        self.init(rounds: rounds, salt: Array(bytes[6..<22]), hash: SymmetricKey(data: bytes[22...]))
    }

    var encoded: [UInt8] {
        var bytes = Self.header
        withUnsafeBytes(of: rounds.bigEndian) { bytes += $0 }
        bytes += salt
        hash.withUnsafeBytes { bytes += $0 }
        return bytes
    }

    /// Constant-time: `SymmetricKey`'s `==` compares without early exit.
    func matches(authKey: some DataProtocol) -> Bool {
        Self.hash(authKey, salt: salt, rounds: rounds) == hash
    }

    private static func hash(_ authKey: some DataProtocol, salt: [UInt8], rounds: UInt32) -> SymmetricKey {
        do {
            return try KDF.Insecure.PBKDF2.deriveKey(
                from: authKey, salt: salt, using: .sha256, outputByteCount: 32, unsafeUncheckedRounds: Int(rounds))
        } catch {
            preconditionFailure("PBKDF2 failed")
        }
    }
}

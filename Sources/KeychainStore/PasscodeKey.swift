import Crypto
import CryptoExtras
import Foundation
import KeychainModel

/// Derives the key-encryption key of the passcode classes from the passcode and the device key.
///
/// scrypt makes guessing slow; mixing in the device key (as the HKDF salt) means the database and
/// a guessed passcode are not enough without the device key file as well.
struct PasscodeKey {
    /// scrypt cost parameters, stored with the keychain so they can change later.
    struct Parameters: Sendable, Hashable {
        var rounds: Int
        var blockSize: Int
        var parallelism: Int

        /// N = 2^15, r = 8, p = 1: about 32 MiB and a tenth of a second, paid once per unlock.
        static let `default` = Parameters(rounds: 1 << 15, blockSize: 8, parallelism: 1)
    }

    /// A passcode key and the salt and parameters it was derived with.
    struct Derived {
        var salt: [UInt8]
        var parameters: Parameters
        var key: SymmetricKey
    }

    static func derive(passcode: String, salt: [UInt8], parameters: Parameters, deviceKey: SymmetricKey)
        throws(KeychainError) -> SymmetricKey
    {
        do {
            let stretched = try KDF.Scrypt.deriveKey(
                from: Array(passcode.utf8), salt: salt, outputByteCount: 32,
                rounds: parameters.rounds, blockSize: parameters.blockSize, parallelism: parameters.parallelism)
            return deviceKey.withUnsafeBytes { deviceBytes in
                HKDF<SHA256>.deriveKey(
                    inputKeyMaterial: stretched, salt: deviceBytes,
                    info: Array("SKv1 passcode-class-kek".utf8), outputByteCount: 32)
            }
        } catch {
            throw KeychainError(.param, "passcode key derivation failed", underlying: nil)
        }
    }
}

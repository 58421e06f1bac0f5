import Crypto
import Foundation

/// The layout every sealed value in this module shares: `version (1) ‖ nonce (12) ‖ ciphertext ‖
/// tag (16)`, AES-256-GCM, the version byte also leading the associated data.
enum AEADLayout {
    static let overhead = 1 + 12 + 16

    /// A nonce from the 12 bytes a known-answer test gives.
    static func nonce(_ bytes: [UInt8]) throws(CryptoError) -> AES.GCM.Nonce {
        do {
            return try AES.GCM.Nonce(data: bytes)
        } catch {
            throw .invalidInput("a nonce has 12 bytes")
        }
    }

    static func join(version: UInt8, _ box: AES.GCM.SealedBox) -> [UInt8] {
        // `combined` is nonce ‖ ciphertext ‖ tag for a 12-byte nonce: one copy after the version.
        let combined = box.combined!
        return [UInt8](unsafeUninitializedCapacity: 1 + combined.count) { buffer, initialized in
            buffer[0] = version
            _ = combined.copyBytes(to: UnsafeMutableBufferPointer(rebasing: buffer[1...]))
            initialized = 1 + combined.count
        }
    }

    /// Opens a joined value; every failure is the one coarse ``CryptoError/authenticationFailed``.
    static func open(_ bytes: [UInt8], version: UInt8, under key: SymmetricKey, associatedData: [UInt8]) throws(CryptoError) -> Data {
        guard bytes.count >= overhead, bytes[0] == version else { throw .authenticationFailed }
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: bytes[1..<13]),
                ciphertext: bytes[13..<(bytes.count - 16)],
                tag: bytes[(bytes.count - 16)...]
            )
            return try AES.GCM.open(box, using: key, authenticating: associatedData)
        } catch {
            throw .authenticationFailed
        }
    }
}

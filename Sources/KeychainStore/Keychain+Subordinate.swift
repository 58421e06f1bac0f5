import Crypto
import Foundation
import KeychainModel

extension Keychain {
    /// Opens the keychain at `path`, created when missing, kept beside this one and locked with it
    /// (a shared group's keychain, decision 0298): its class keys are sealed under a key derived
    /// from this keychain's "after first unlock" class key and `name`, not under a device key
    /// file of its own. So a copy of the files opens it only with this keychain's passcode, when
    /// one is set, and nothing opens it before this keychain's first unlock since the machine
    /// started. While this keychain is locked, so is the one opened: its "when unlocked" items
    /// give nothing, as this keychain's do.
    /// - Throws: ``KeychainStatus/interactionNotAllowed`` before that first unlock; otherwise as
    ///   ``open(at:configuration:)``.
    public func openSubordinate(at path: String, name: [UInt8], configuration: Configuration) throws(KeychainError) -> Keychain {
        let classKey = try classKey(.afterFirstUnlock)
        var configuration = configuration
        configuration.subordinateKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: classKey.key, info: Array("synckeychain/v1/subordinate-keychain".utf8) + name, outputByteCount: 32)
        configuration.lockedWith = self
        return try Keychain.open(at: path, configuration: configuration)
    }
}

import Crypto
import Foundation

/// A pulled item held for the keychain's unlock (docs/decisions/0137, 0238), sealed in the sync
/// state to a key pair of the device's "when unlocked" class: HPKE in base mode to its X-Wing
/// public key, which is readable while locked, so an arrival can be sealed then; its private
/// half opens only after the unlock.
///
/// Info: `len(label) ‖ label ‖ len(zone) ‖ zone ‖ len(item) ‖ item`, label
/// `synckeychain/v1/held-arrival`, so a held arrival opens for no other item.
/// Wire form: `len(encapsulated key) ‖ encapsulated key ‖ ciphertext`.
public enum HeldArrivalWrap {
    private static let label = "synckeychain/v1/held-arrival"

    private static func info(zone: String, item: String) -> Data {
        AgreementWrap.info(label, zone, item)
    }

    /// Seals `payload` (the held versions) of `item` in `zone` to the public key `recipient`.
    ///
    /// - Throws: ``CryptoError`` ``CryptoError/Code/invalidInput`` for a malformed public key.
    public static func seal(_ payload: [UInt8], to recipient: [UInt8], zone: String, item: String) throws(CryptoError) -> [UInt8] {
        try AgreementWrap.seal(payload, to: recipient, info: info(zone: zone, item: item))
    }

    /// Opens what ``seal(_:to:zone:item:)`` sealed for `item` in `zone`.
    ///
    /// - Throws: ``CryptoError`` ``CryptoError/Code/authenticationFailed`` for every failure.
    public static func open(_ wire: [UInt8], with key: DeviceAgreementKey, zone: String, item: String) throws(CryptoError) -> [UInt8] {
        try AgreementWrap.open(wire, with: key, info: info(zone: zone, item: item))
    }
}

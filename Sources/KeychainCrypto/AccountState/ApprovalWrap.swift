import Crypto
import Foundation

/// What an approving device sends a new device (docs/decisions/0130): a payload (the account keys
/// and the approver's verified state, encoded by the caller) sealed with HPKE in base mode to the
/// new device's X-Wing key, ciphersuite `XWingMLKEM768X25519_SHA256_AES_GCM_256`.
///
/// Info: `len(label) ‖ label ‖ len(account) ‖ account ‖ len(device) ‖ device`, label
/// `synckeychain/v1/approval`, so a wrap made for one device or account opens for no other.
/// Wire form: `len(encapsulated key) ‖ encapsulated key ‖ ciphertext`.
public enum ApprovalWrap {
    private static let label = "synckeychain/v1/approval"

    private static func info(account: String, device: String) -> Data {
        AgreementWrap.info(label, account, device)
    }

    /// Seals `payload` to the X-Wing public key `recipient` (1,216 bytes) of `device`.
    ///
    /// - Throws: ``CryptoError`` ``CryptoError/Code/invalidInput`` for a malformed public key.
    public static func seal(_ payload: [UInt8], to recipient: [UInt8], account: String, device: String) throws(CryptoError) -> [UInt8] {
        try AgreementWrap.seal(payload, to: recipient, info: info(account: account, device: device))
    }

    /// Opens a wrap made for `device` of `account` with that device's key.
    ///
    /// - Throws: ``CryptoError`` ``CryptoError/Code/authenticationFailed`` for every failure.
    public static func open(_ wire: [UInt8], with key: DeviceAgreementKey, account: String, device: String) throws(CryptoError) -> [UInt8] {
        try AgreementWrap.open(wire, with: key, info: info(account: account, device: device))
    }
}

/// HPKE in base mode to a device's X-Wing key, ciphersuite `XWingMLKEM768X25519_SHA256_AES_GCM_256`,
/// under an `info` that names what the wrap is for: approval (``ApprovalWrap``) and key epochs
/// (``EpochKeyPayload``). Wire form: `len(encapsulated key) ‖ encapsulated key ‖ ciphertext`.
enum AgreementWrap {
    private static let ciphersuite = HPKE.Ciphersuite.XWingMLKEM768X25519_SHA256_AES_GCM_256

    /// An `info` of `label` and `parts`, each length-prefixed, in order.
    static func info(_ label: String, _ parts: String...) -> Data {
        var info: [UInt8] = []
        info.appendLengthPrefixed(label.utf8)
        for part in parts { info.appendLengthPrefixed(part.utf8) }
        return Data(info)
    }

    /// - Throws: ``CryptoError`` ``CryptoError/Code/invalidInput`` for a malformed public key.
    static func seal(_ payload: [UInt8], to recipient: [UInt8], info: Data) throws(CryptoError) -> [UInt8] {
        guard let publicKey = try? XWingMLKEM768X25519.PublicKey(rawRepresentation: recipient) else {
            throw .invalidInput("not an X-Wing public key")
        }
        do {
            var sender = try HPKE.Sender(recipientKey: publicKey, ciphersuite: ciphersuite, info: info)
            let ciphertext = try sender.seal(payload)
            var wire: [UInt8] = []
            wire.appendLengthPrefixed(sender.encapsulatedKey)
            wire.append(contentsOf: ciphertext)
            return wire
        } catch {
            throw .internalFailure(error)
        }
    }

    /// - Throws: ``CryptoError`` ``CryptoError/Code/authenticationFailed`` for every failure.
    static func open(_ wire: [UInt8], with key: DeviceAgreementKey, info: Data) throws(CryptoError) -> [UInt8] {
        var reader = ByteReader(wire[...])
        guard let encapsulated = reader.readLengthPrefixed() else { throw .authenticationFailed }
        do {
            var recipient = try HPKE.Recipient(privateKey: key.key, ciphersuite: ciphersuite, info: info, encapsulatedKey: Data(encapsulated))
            return Array(try recipient.open(reader.rest))
        } catch {
            throw .authenticationFailed
        }
    }
}

import Crypto
import Foundation

/// What an `epoch` (or `epochKeys`) entry of the device log carries (decision 0176): the new
/// epoch's account key sealed with HPKE to each remaining device's X-Wing key, and — in the
/// `epoch` entry — the previous epoch's key sealed under the new one, so a holder of the newest
/// key reads every older blob.
///
/// Wire form: `count (4) ‖ (len(recipient) ‖ recipient ‖ len(wrap) ‖ wrap)… ‖ len(previous) ‖
/// previous`. A wrap is HPKE base mode, ciphersuite `XWingMLKEM768X25519_SHA256_AES_GCM_256`,
/// `len(encapsulated key) ‖ encapsulated key ‖ ciphertext`, info `len(label) ‖ label ‖
/// len(account) ‖ account ‖ len(recipient) ‖ recipient ‖ epoch (4)`, label
/// `synckeychain/v1/epoch-key`, plaintext the 32-byte key. `previous` is a ``KeyWrap`` (61 bytes)
/// of the previous epoch's key under the new key's `epoch-chain` key, associated data binding the
/// account and the previous epoch; empty in an `epochKeys` entry.
public struct EpochKeyPayload: Sendable, Equatable {
    /// One recipient's wrap.
    public struct Wrap: Sendable, Equatable {
        /// The device ID the key is sealed to.
        public var recipient: String
        /// The HPKE wrap.
        public var wrap: [UInt8]
    }

    /// The wraps, one per recipient.
    public var wraps: [Wrap]
    /// The previous epoch's key sealed under this epoch's; empty in an `epochKeys` entry.
    public var previous: [UInt8]

    private static let label = "synckeychain/v1/epoch-key"

    /// Creates a payload from its parts.
    public init(wraps: [Wrap], previous: [UInt8]) {
        self.wraps = wraps
        self.previous = previous
    }

    /// Seals `key`, the account key of `epoch`, to every recipient's X-Wing public key; with
    /// `previousKey`, the key of `epoch - 1`, sealed under `key`.
    ///
    /// - Throws: ``CryptoError`` ``CryptoError/Code/invalidInput`` for a malformed public key or
    ///   an epoch below 2.
    public static func sealing(
        _ key: AccountKey, epoch: UInt32, account: String, to recipients: [(device: String, agreementKey: [UInt8])],
        previousKey: AccountKey?
    ) throws(CryptoError) -> EpochKeyPayload {
        guard epoch >= 2 else { throw .invalidInput("epoch 1 has no predecessor") }
        var wraps: [Wrap] = []
        for recipient in recipients {
            let wire = try AgreementWrap.seal(
                key.rawRepresentation, to: recipient.agreementKey, info: info(account: account, recipient: recipient.device, epoch: epoch))
            wraps.append(Wrap(recipient: recipient.device, wrap: wire))
        }
        var previous: [UInt8] = []
        if let previousKey {
            previous = try KeyWrap.seal(
                previousKey.key, under: KeyPurpose.epochChain.derive(from: key.key),
                associatedData: KeyWrap.chainAssociatedData(account: account, epoch: epoch - 1))
        }
        return EpochKeyPayload(wraps: wraps, previous: previous)
    }

    /// The key of `epoch` sealed to `device`, opened with its agreement key; nil when the payload
    /// holds no wrap for it.
    ///
    /// - Throws: ``CryptoError`` ``CryptoError/Code/authenticationFailed`` when the wrap does not open.
    public func key(for device: String, with agreementKey: DeviceAgreementKey, account: String, epoch: UInt32) throws(CryptoError) -> AccountKey? {
        guard let wrap = wraps.first(where: { $0.recipient == device }) else { return nil }
        let plaintext = try AgreementWrap.open(wrap.wrap, with: agreementKey, info: Self.info(account: account, recipient: device, epoch: epoch))
        do {
            return try AccountKey(rawRepresentation: plaintext)
        } catch {
            throw .authenticationFailed
        }
    }

    /// The key of `epoch - 1`, opened with `key`, the key of `epoch`.
    ///
    /// - Throws: ``CryptoError`` ``CryptoError/Code/authenticationFailed`` for every failure (no
    ///   sealed key, another key, account or epoch, tampered bytes).
    public func previousKey(openedWith key: AccountKey, account: String, epoch: UInt32) throws(CryptoError) -> AccountKey {
        guard epoch >= 2 else { throw .authenticationFailed }
        let opened = try KeyWrap.open(
            previous, under: KeyPurpose.epochChain.derive(from: key.key), associatedData: KeyWrap.chainAssociatedData(account: account, epoch: epoch - 1))
        return AccountKey(key: opened)
    }

    private static func info(account: String, recipient: String, epoch: UInt32) -> Data {
        var info: [UInt8] = []
        info.appendLengthPrefixed(label.utf8)
        info.appendLengthPrefixed(account.utf8)
        info.appendLengthPrefixed(recipient.utf8)
        info.appendBigEndian(epoch)
        return Data(info)
    }

    /// The wire form.
    public var encoded: [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendBigEndian(UInt32(wraps.count))
        for wrap in wraps {
            bytes.appendLengthPrefixed(wrap.recipient.utf8)
            bytes.appendLengthPrefixed(wrap.wrap)
        }
        bytes.appendLengthPrefixed(previous)
        return bytes
    }

    /// Reads the wire form; nil when malformed.
    public init?(encoded bytes: [UInt8]) {
        var reader = ByteReader(bytes[...])
        guard let count = reader.readBigEndian(UInt32.self), count <= 10_000 else { return nil }
        var wraps: [Wrap] = []
        for _ in 0..<count {
            guard let recipient = reader.readLengthPrefixed().flatMap({ String(validating: $0, as: UTF8.self) }),
                let wrap = reader.readLengthPrefixed()
            else { return nil }
            wraps.append(Wrap(recipient: recipient, wrap: Array(wrap)))
        }
        guard let previous = reader.readLengthPrefixed(), reader.isAtEnd else { return nil }
        self.init(wraps: wraps, previous: Array(previous))
    }
}

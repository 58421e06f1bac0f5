import Crypto
import Foundation
import SyncCore

/// The keys derived once from an ``AccountKey`` and kept for the hot paths (no HKDF per item): the
/// item-ID key and the item-blob key.
///
/// Item blobs use one AES-256-GCM key derived from the account key with a random 96-bit nonce per
/// seal (docs/decisions/0021).
public struct AccountKeys: Sendable {
    private let idKey: SymmetricKey
    private let blobKey: SymmetricKey

    /// Derives the sub-keys of `accountKey`.
    public init(accountKey: AccountKey) {
        idKey = KeyPurpose.itemID.derive(from: accountKey.key)
        blobKey = KeyPurpose.itemBlob.derive(from: accountKey.key)
    }

    /// The opaque ID of the item whose primary key is `fields`, in order, in `zone`: 64 lowercase
    /// hex digits of an HMAC, as SyncCore's ``ItemID``.
    ///
    /// HMAC-SHA256 under the item-ID key over `len(zone) ‖ zone ‖ count ‖ (len(name) ‖ name ‖
    /// len(value) ‖ value)…`, lengths and the count 4-byte big-endian, text UTF-8: the same item
    /// gives the same ID on every device, and no two field lists share an encoding.
    public func itemID(zone: String, fields: [(name: String, value: [UInt8])]) -> ItemID {
        var message: [UInt8] = []
        message.appendLengthPrefixed(zone.utf8)
        message.appendBigEndian(UInt32(fields.count))
        for field in fields {
            message.appendLengthPrefixed(field.name.utf8)
            message.appendLengthPrefixed(field.value)
        }
        let code = HMAC<SHA256>.authenticationCode(for: message, using: idKey)
        return ItemID(Array(code).hexString)
    }

    /// Seals one item version (or a tombstone) into a blob for the server.
    ///
    /// Blob: `version (1) = 0x01 ‖ nonce (12) ‖ ciphertext ‖ tag (16)`, the plaintext padded as
    /// described in docs/decisions/0021, `context` as associated data.
    /// - Throws: ``CryptoError`` with code ``CryptoError/Code/invalidInput`` for a payload over
    ///   ``ItemEnvelope/maximumPayloadSize``.
    public func seal(_ envelope: ItemEnvelope, context: ItemBlobContext) throws(CryptoError) -> [UInt8] {
        try seal(envelope, context: context, nonce: AES.GCM.Nonce())
    }

    /// The length of the blob ``seal(_:context:)`` makes of a payload of `payloadLength` bytes
    /// written by `device`, without sealing anything (padding included).
    public static func sealedLength(payloadLength: Int, device: DeviceID) -> Int {
        AEADLayout.overhead + ItemBlobFormat.paddedLength(ItemBlobFormat.unpaddedLength(payloadLength: payloadLength, device: device))
    }

    /// ``seal(_:context:)`` with a given nonce: for known-answer tests only.
    package func seal(_ envelope: ItemEnvelope, context: ItemBlobContext, nonce: [UInt8]) throws(CryptoError) -> [UInt8] {
        try seal(envelope, context: context, nonce: AEADLayout.nonce(nonce))
    }

    private func seal(_ envelope: ItemEnvelope, context: ItemBlobContext, nonce: AES.GCM.Nonce) throws(CryptoError) -> [UInt8] {
        let plaintext = try ItemBlobFormat.plaintext(of: envelope)
        do {
            let box = try AES.GCM.seal(plaintext, using: blobKey, nonce: nonce, authenticating: context.associatedData)
            return AEADLayout.join(version: ItemBlobFormat.version, box)
        } catch {
            throw .internalFailure(error)
        }
    }

    /// Opens a blob sealed for exactly `context`.
    ///
    /// - Throws: ``CryptoError`` with code ``CryptoError/Code/authenticationFailed`` for every
    ///   failure (wrong key or account, another item, zone, epoch, vector or deleted flag, any
    ///   changed byte, a malformed plaintext), never saying which.
    public func open(_ blob: [UInt8], context: ItemBlobContext) throws(CryptoError) -> ItemEnvelope {
        let plaintext = try AEADLayout.open(blob, version: ItemBlobFormat.version, under: blobKey, associatedData: context.associatedData)
        guard let envelope = ItemBlobFormat.envelope(from: [UInt8](plaintext)) else { throw .authenticationFailed }
        return envelope
    }
}

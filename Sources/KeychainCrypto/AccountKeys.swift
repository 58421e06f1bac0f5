import Crypto
import Foundation
import Synchronization
import SyncCore

/// The keys derived once from the account key of every epoch this device holds, kept for the hot
/// paths (no HKDF per item): the item-ID key (of epoch 1, for good: decision 0120's amendment) and
/// each epoch's item-blob key.
///
/// Item blobs use one AES-256-GCM key derived from the account key of their epoch with a random
/// 96-bit nonce per seal (docs/decisions/0021). A blob of epoch 1 has the format it always had
/// (version 0x01); a blob of a later epoch names its epoch (version 0x02, decision 0177).
///
/// Copies share one keyring: a key learnt with ``learn(_:epoch:)`` (a new epoch read from the
/// device log) is used at once by every copy, so a running sync seals under it from the next seal.
public struct AccountKeys: Sendable {
    private let idKey: SymmetricKey
    private let ring: Ring

    /// The keyring every copy shares; its only state is behind a `Mutex`.
    private final class Ring: Sendable {
        struct Epoch: Sendable { var accountKey: AccountKey; var blobKey: SymmetricKey }
        let epochs: Mutex<[UInt32: Epoch]>
        init(_ epochs: [UInt32: Epoch]) { self.epochs = Mutex(epochs) }
    }

    /// Derives the sub-keys of `accountKey`, the key of epoch 1.
    public init(accountKey: AccountKey) {
        self.init(first: accountKey, later: [:])
    }

    /// Derives the sub-keys of every epoch's key.
    ///
    /// - Throws: ``CryptoError`` ``CryptoError/Code/invalidInput`` without the key of epoch 1 (item
    ///   IDs stay under it).
    public init(epochs: [UInt32: AccountKey]) throws(CryptoError) {
        guard let first = epochs[1], epochs.keys.allSatisfy({ $0 >= 1 }) else { throw .invalidInput("the key of epoch 1 is missing") }
        self.init(first: first, later: epochs.filter { $0.key > 1 })
    }

    private init(first: AccountKey, later: [UInt32: AccountKey]) {
        idKey = KeyPurpose.itemID.derive(from: first.key)
        var epochs = [UInt32(1): Ring.Epoch(accountKey: first, blobKey: KeyPurpose.itemBlob.derive(from: first.key))]
        for (epoch, key) in later {
            epochs[epoch] = Ring.Epoch(accountKey: key, blobKey: KeyPurpose.itemBlob.derive(from: key.key))
        }
        ring = Ring(epochs)
    }

    /// The newest epoch held: every seal is made under it.
    public var currentEpoch: UInt32 { ring.epochs.withLock { $0.keys.max() ?? 1 } }

    /// The account key of `epoch`, when held.
    public func accountKey(epoch: UInt32) -> AccountKey? { ring.epochs.withLock { $0[epoch]?.accountKey } }

    /// Every epoch's account key held.
    public var accountKeys: [UInt32: AccountKey] { ring.epochs.withLock { $0.mapValues(\.accountKey) } }

    /// Adds the key of `epoch` to the keyring every copy shares (a key already held is kept).
    public func learn(_ key: AccountKey, epoch: UInt32) {
        let blobKey = KeyPurpose.itemBlob.derive(from: key.key)
        ring.epochs.withLock { epochs in
            if epochs[epoch] == nil { epochs[epoch] = Ring.Epoch(accountKey: key, blobKey: blobKey) }
        }
    }

    /// Whether a blob is of the signed format (decision 0275): its plaintext carries its writer's
    /// signature, checked by whoever opens it against the device log.
    public static func isSigned(blob: [UInt8]) -> Bool { blob.first == ItemBlobFormat.signedVersion }

    /// The epoch a blob names: 1 for the format without one, nil for a blob too short to say.
    public static func epoch(ofBlob blob: [UInt8]) -> UInt32? {
        guard let version = blob.first else { return nil }
        if version == ItemBlobFormat.version { return 1 }
        guard version == ItemBlobFormat.epochVersion || version == ItemBlobFormat.signedVersion, blob.count >= 5 else { return nil }
        return blob[1..<5].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    private func blobKey(ofEpoch epoch: UInt32) -> SymmetricKey? { ring.epochs.withLock { $0[epoch]?.blobKey } }

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

    /// Seals one item version (or a tombstone) into a blob for the server, under the key of
    /// `context`'s epoch.
    ///
    /// Blob of epoch 1: `version (1) = 0x01 ‖ nonce (12) ‖ ciphertext ‖ tag (16)`, the plaintext
    /// padded as described in docs/decisions/0021, `context` as associated data. Of a later epoch:
    /// `0x02 ‖ epoch (4) ‖ nonce ‖ ciphertext ‖ tag`, the associated data's leading version byte
    /// 0x02 too (decision 0177). An envelope with a signature (decision 0275), of any epoch:
    /// `0x03 ‖ epoch (4) ‖ nonce ‖ ciphertext ‖ tag`, the signature sealed after the payload, the
    /// associated data's leading byte 0x03.
    /// - Throws: ``CryptoError`` with code ``CryptoError/Code/invalidInput`` for a payload over
    ///   ``ItemEnvelope/maximumPayloadSize`` or an epoch whose key is not held.
    public func seal(_ envelope: ItemEnvelope, context: ItemBlobContext) throws(CryptoError) -> [UInt8] {
        try seal(envelope, context: context, nonce: AES.GCM.Nonce())
    }

    /// The length of the blob ``seal(_:context:)`` makes of a payload of `payloadLength` bytes
    /// written by `device`, without sealing anything (padding included).
    /// With `signer`, of a blob it signs (decision 0275).
    public static func sealedLength(payloadLength: Int, device: DeviceID, epoch: UInt32 = 1, signer: DeviceID? = nil) -> Int {
        (epoch == 1 && signer == nil ? 0 : 4) + AEADLayout.overhead
            + ItemBlobFormat.paddedLength(ItemBlobFormat.unpaddedLength(payloadLength: payloadLength, device: device, signer: signer))
    }

    /// ``seal(_:context:)`` with a given nonce: for known-answer tests only.
    package func seal(_ envelope: ItemEnvelope, context: ItemBlobContext, nonce: [UInt8]) throws(CryptoError) -> [UInt8] {
        try seal(envelope, context: context, nonce: AEADLayout.nonce(nonce))
    }

    private func seal(_ envelope: ItemEnvelope, context: ItemBlobContext, nonce: AES.GCM.Nonce) throws(CryptoError) -> [UInt8] {
        let plaintext = try ItemBlobFormat.plaintext(of: envelope)
        guard let blobKey = blobKey(ofEpoch: context.keyEpoch) else { throw .invalidInput("the key of that epoch is not held") }
        if context.keyEpoch == 1 && envelope.signature == nil {
            do {
                let box = try AES.GCM.seal(plaintext, using: blobKey, nonce: nonce, authenticating: context.associatedData)
                return AEADLayout.join(version: ItemBlobFormat.version, box)
            } catch {
                throw .internalFailure(error)
            }
        }
        do {
            let version = envelope.signature == nil ? ItemBlobFormat.epochVersion : ItemBlobFormat.signedVersion
            let box = try AES.GCM.seal(plaintext, using: blobKey, nonce: nonce, authenticating: Self.associatedData(context, version: version))
            var blob: [UInt8] = [version]
            blob.appendBigEndian(context.keyEpoch)
            blob += AEADLayout.join(version: version, box).dropFirst()
            return blob
        } catch {
            throw .internalFailure(error)
        }
    }

    private static func associatedData(_ context: ItemBlobContext, version: UInt8) -> [UInt8] {
        var bytes = context.associatedData
        bytes[0] = version
        return bytes
    }

    /// Opens a blob sealed for exactly `context` (its epoch included: read it with
    /// ``epoch(ofBlob:)``). A signed blob's envelope carries its signature, not checked here: who
    /// may write is the device log's say (``DeviceLog/admits(_:context:)``, decision 0275).
    ///
    /// - Throws: ``CryptoError`` with code ``CryptoError/Code/authenticationFailed`` for every
    ///   failure (wrong key or account, another item, zone, epoch, vector or deleted flag, any
    ///   changed byte, a malformed plaintext, an epoch whose key is not held), never saying which.
    public func open(_ blob: [UInt8], context: ItemBlobContext) throws(CryptoError) -> ItemEnvelope {
        guard Self.epoch(ofBlob: blob) == context.keyEpoch, let blobKey = blobKey(ofEpoch: context.keyEpoch) else { throw .authenticationFailed }
        let plaintext: Data
        let version = blob[0]
        if version == ItemBlobFormat.version {
            plaintext = try AEADLayout.open(blob, version: version, under: blobKey, associatedData: context.associatedData)
        } else {
            plaintext = try AEADLayout.open(
                [version] + blob.dropFirst(5), version: version, under: blobKey, associatedData: Self.associatedData(context, version: version))
        }
        let signed = version == ItemBlobFormat.signedVersion
        guard let envelope = ItemBlobFormat.envelope(from: [UInt8](plaintext), signed: signed) else { throw .authenticationFailed }
        return envelope
    }
}

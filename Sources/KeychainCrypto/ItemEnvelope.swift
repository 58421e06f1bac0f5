import Crypto
import SyncCore

/// The plaintext of an item blob: the client's opaque payload (every attribute and the secret),
/// the modification time and the device that wrote this version.
public struct ItemEnvelope: Sendable, Equatable {
    /// The largest payload accepted, in bytes (16 MiB).
    public static let maximumPayloadSize = 16 << 20

    /// The attributes and secret, encoded by the client; empty for a tombstone.
    public var payload: [UInt8]
    /// The modification time, milliseconds since 1970-01-01 UTC.
    public var modificationTime: Int64
    /// The device that wrote this version's value (a resolution made elsewhere keeps its writer).
    public var device: DeviceID
    /// The signature of the device that sealed the version for the server (decision 0275): inside
    /// the seal, so the server does not learn who pushed what; nil in a blob of the formats before
    /// it, and in the client's own state file.
    public var signature: WriterSignature?

    /// A device's Ed25519 signature of a version (``signedBytes(context:signer:)``).
    public struct WriterSignature: Sendable, Equatable {
        /// The device that signed: the one that sealed the version, not always its value's writer.
        public var signer: DeviceID
        /// 64 bytes.
        public var bytes: [UInt8]

        /// A signature by `signer`.
        public init(signer: DeviceID, bytes: [UInt8]) {
            self.signer = signer
            self.bytes = bytes
        }
    }

    /// Creates an envelope.
    public init(payload: [UInt8], modificationTime: Int64, device: DeviceID, signature: WriterSignature? = nil) {
        self.payload = payload
        self.modificationTime = modificationTime
        self.device = device
        self.signature = signature
    }

    private static let label = "synckeychain/v1/item-version"

    /// What `signer` signs: `len(label) ‖ label ‖ context's associated data (account, zone, item ID,
    /// epoch, vector, deleted flag) ‖ modificationTime (8) ‖ len(device) ‖ device ‖ len(signer) ‖
    /// signer ‖ SHA-256(payload)`, label `synckeychain/v1/item-version`.
    public func signedBytes(context: ItemBlobContext, signer: DeviceID) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4 + Self.label.utf8.count + context.associatedData.count + 8 + 8 + device.rawValue.utf8.count + signer.rawValue.utf8.count + 32)
        bytes.appendLengthPrefixed(Self.label.utf8)
        bytes += context.associatedData
        bytes.appendBigEndian(UInt64(bitPattern: modificationTime))
        bytes.appendLengthPrefixed(device.rawValue.utf8)
        bytes.appendLengthPrefixed(signer.rawValue.utf8)
        bytes += SHA256.hash(data: payload)
        return bytes
    }

    /// This envelope signed for `context` by `signer`, with its identity key `key`.
    public func signed(by signer: DeviceID, with key: DeviceSigningKey, context: ItemBlobContext) throws(CryptoError) -> ItemEnvelope {
        var copy = self
        copy.signature = WriterSignature(signer: signer, bytes: try key.signature(for: signedBytes(context: context, signer: signer)))
        return copy
    }

    /// Whether the envelope carries a signature of its signer, whose public key is `key`, for `context`.
    public func isSigned(with key: DevicePublicKey, context: ItemBlobContext) -> Bool {
        guard let signature else { return false }
        return key.isValidSignature(signature.bytes, for: signedBytes(context: context, signer: signature.signer))
    }
}

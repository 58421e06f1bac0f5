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
    /// The device that wrote this version.
    public var device: DeviceID
    /// The writer's Ed25519 signature of the version (``signedBytes(context:)``, 64 bytes), sealed
    /// with it so the server does not learn who wrote what (decision 0275); nil in a blob of the
    /// formats before it, and in the client's own state file.
    public var signature: [UInt8]?

    /// Creates an envelope.
    public init(payload: [UInt8], modificationTime: Int64, device: DeviceID, signature: [UInt8]? = nil) {
        self.payload = payload
        self.modificationTime = modificationTime
        self.device = device
        self.signature = signature
    }

    private static let label = "synckeychain/v1/item-version"

    /// What the writer signs: `len(label) ‖ label ‖ context's associated data (account, zone, item
    /// ID, epoch, vector, deleted flag) ‖ modificationTime (8) ‖ len(device) ‖ device ‖
    /// SHA-256(payload)`, label `synckeychain/v1/item-version`.
    public func signedBytes(context: ItemBlobContext) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4 + Self.label.utf8.count + context.associatedData.count + 8 + 4 + device.rawValue.utf8.count + 32)
        bytes.appendLengthPrefixed(Self.label.utf8)
        bytes += context.associatedData
        bytes.appendBigEndian(UInt64(bitPattern: modificationTime))
        bytes.appendLengthPrefixed(device.rawValue.utf8)
        bytes += SHA256.hash(data: payload)
        return bytes
    }

    /// This envelope signed by its writer's identity key for `context`.
    public func signed(with key: DeviceSigningKey, context: ItemBlobContext) throws(CryptoError) -> ItemEnvelope {
        var copy = self
        copy.signature = try key.signature(for: signedBytes(context: context))
        return copy
    }

    /// Whether the envelope carries a signature of `key` for `context`.
    public func isSigned(by key: DevicePublicKey, context: ItemBlobContext) -> Bool {
        guard let signature else { return false }
        return key.isValidSignature(signature, for: signedBytes(context: context))
    }
}

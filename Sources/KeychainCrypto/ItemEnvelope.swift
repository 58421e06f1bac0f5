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

    /// Creates an envelope.
    public init(payload: [UInt8], modificationTime: Int64, device: DeviceID) {
        self.payload = payload
        self.modificationTime = modificationTime
        self.device = device
    }
}

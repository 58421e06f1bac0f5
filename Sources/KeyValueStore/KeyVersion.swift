import SyncCore

/// A version of one key as the sync engine exchanges it: SyncCore's ``ItemVersion`` whose content
/// is the key's sync payload (see ``syncContent(key:value:)``), with the key beside it.
///
/// The payload carries the key because the server only sees the opaque item ID of a key
/// (``KeyValueStore/itemIDFields(forKey:)``); a tombstone's content is empty, so a removal is
/// matched to its key through the item ID.
public struct KeyVersion: Hashable, Sendable {
    /// The key.
    public let key: String
    /// The version: vector, tombstone flag, modification time, writing device, payload.
    public let version: ItemVersion

    /// The first byte of a sync payload: its format.
    static let payloadFormat: UInt8 = 1

    /// A version of `key` from an ``ItemVersion`` the sync engine opened.
    /// - Throws: ``KeyValueStoreError/Code/corruptValue`` when the payload is not a valid payload
    ///   of `key`; ``KeyValueStoreError/Code/invalidKey`` or `keyTooLong` for a key the store would
    ///   not accept.
    public init(key: String, version: ItemVersion) throws(KeyValueStoreError) {
        try KeyValueLimits.validate(key: key)
        if !version.isDeleted {
            let (payloadKey, _) = try Self.decodeSyncContent(version.content)
            guard payloadKey.utf8.elementsEqual(key.utf8) else {
                throw KeyValueStoreError(.corruptValue, "a synced version belongs to another key")
            }
        }
        self.key = key
        self.version = version
    }

    /// A version of `key` holding `value` (`nil` for a removal).
    public init(
        key: String, value: KeyValue?, vector: VersionVector, modifiedAt: Int64, device: DeviceID,
        origin: VersionVector? = nil, overwritten: VersionVector = VersionVector()
    ) throws(KeyValueStoreError) {
        try KeyValueLimits.validate(key: key)
        self.key = key
        self.version = ItemVersion(
            vector: vector, isDeleted: value == nil, modifiedAt: modifiedAt, device: device,
            content: value.map { Self.syncContent(key: key, value: $0) } ?? [], origin: origin, overwritten: overwritten)
    }

    /// The value, or `nil` for a tombstone.
    public var value: KeyValue? {
        version.isDeleted ? nil : try? Self.decodeSyncContent(version.content).value
    }

    /// Whether this version removes the key.
    public var isDeleted: Bool { version.isDeleted }
    /// The version vector.
    public var vector: VersionVector { version.vector }
    /// Milliseconds since 1970 on the writing device's clock.
    public var modifiedAt: Int64 { version.modifiedAt }
    /// The writing device.
    public var device: DeviceID { version.device }

    /// The sync payload of a key's value: `0x01 ‖ length (4, big-endian) ‖ key UTF-8 ‖ value's
    /// canonical encoding`.
    public static func syncContent(key: String, value: KeyValue) -> [UInt8] {
        var bytes = [payloadFormat]
        KeyValue.appendLengthPrefixed(Array(key.utf8), to: &bytes)
        return bytes + value.canonicalEncoding
    }

    /// The key and value of a sync payload.
    /// - Throws: ``KeyValueStoreError/Code/corruptValue`` for anything but a valid payload.
    public static func decodeSyncContent(_ content: [UInt8]) throws(KeyValueStoreError) -> (key: String, value: KeyValue) {
        var reader = ByteReader(content)
        guard reader.byte() == payloadFormat, let keyBytes = reader.lengthPrefixed(),
            let key = String(validating: keyBytes, as: UTF8.self), let rest = reader.take(content.count - 5 - keyBytes.count)
        else { throw KeyValueStoreError(.corruptValue, "a synced payload cannot be decoded") }
        return (key, try KeyValue(canonicalEncoding: rest))
    }
}

import SyncCore

/// A version pushed whose answer has not come, as the keychain records it before it goes out
/// (decision 0247): all but its content, which is the item the keychain holds.
///
/// Layout: `len(vector) (4) ‖ vector ‖ modifiedAt (8) ‖ len(device) (1) ‖ device ‖` the sealed
/// payload's metadata (``VersionSealer/payload(of:)`` without content: origin and overwritten).
enum SentVersionRecord {
    static func encode(_ version: ItemVersion) -> [UInt8] {
        let vector = version.vector.canonicalEncoding
        let device = Array(version.device.rawValue.utf8)
        var metadata = version
        metadata.content = []
        var bytes: [UInt8] = []
        withUnsafeBytes(of: UInt32(vector.count).bigEndian) { bytes += $0 }
        bytes += vector
        withUnsafeBytes(of: version.modifiedAt.bigEndian) { bytes += $0 }
        bytes.append(UInt8(device.count))
        bytes += device
        bytes += VersionSealer.payload(of: metadata)
        return bytes
    }

    /// The version, its content empty; nil for bytes ``encode(_:)`` did not make.
    static func decode(_ bytes: [UInt8]) -> ItemVersion? {
        var rest = bytes[...]
        func take(_ count: Int) -> ArraySlice<UInt8>? {
            guard rest.count >= count else { return nil }
            defer { rest = rest.dropFirst(count) }
            return rest.prefix(count)
        }
        func integer(_ count: Int) -> UInt64? { take(count)?.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        guard let vectorLength = integer(4), let vectorBytes = take(Int(vectorLength)),
            let vector = try? VersionVector(canonicalEncoding: vectorBytes), let modifiedAt = integer(8),
            let deviceLength = integer(1), let deviceBytes = take(Int(deviceLength)),
            let device = DeviceID(String(decoding: deviceBytes, as: UTF8.self)),
            let (origin, overwritten, content) = VersionSealer.parts(of: Array(rest)), content.isEmpty
        else { return nil }
        return ItemVersion(
            vector: vector, isDeleted: false, modifiedAt: Int64(bitPattern: modifiedAt), device: device, content: [],
            origin: origin, overwritten: overwritten)
    }
}

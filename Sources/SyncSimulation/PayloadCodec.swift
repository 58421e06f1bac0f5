import SyncCore

/// Stands in for the product's AES-GCM sealing: the payload carries the opened fields and, like
/// the real associated data, the vector and deleted flag, which opening checks against the
/// server's copy so a server that alters them is caught.
enum PayloadCodec {
    static func seal(_ version: ItemVersion) -> SealedVersion {
        var bytes: [UInt8] = [version.isDeleted ? 1 : 0]
        appendBlock(version.vector.canonicalEncoding, to: &bytes)
        appendBlock(version.origin.canonicalEncoding, to: &bytes)
        appendBlock(version.overwritten.canonicalEncoding, to: &bytes)
        appendBlock(Array(version.device.rawValue.utf8), to: &bytes)
        withUnsafeBytes(of: version.modifiedAt.bigEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: version.content)
        return SealedVersion(vector: version.vector, isDeleted: version.isDeleted, payload: bytes)
    }

    /// The opened version, or `nil` when the payload is malformed or disagrees with the sealed
    /// vector or flag.
    static func open(_ sealed: SealedVersion) -> ItemVersion? {
        var reader = sealed.payload[...]
        guard let flag = reader.popFirst(),
            let vectorBytes = readBlock(&reader), let originBytes = readBlock(&reader),
            let overwrittenBytes = readBlock(&reader), let deviceBytes = readBlock(&reader), reader.count >= 8,
            let vector = try? VersionVector(canonicalEncoding: vectorBytes),
            let origin = try? VersionVector(canonicalEncoding: originBytes),
            let overwritten = try? VersionVector(canonicalEncoding: overwrittenBytes),
            let device = DeviceID(String(decoding: deviceBytes, as: UTF8.self))
        else { return nil }
        let modifiedAt = reader.prefix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
        let content = Array(reader.dropFirst(8))
        guard vector == sealed.vector, (flag == 1) == sealed.isDeleted else { return nil }
        return ItemVersion(
            vector: vector, isDeleted: sealed.isDeleted, modifiedAt: modifiedAt, device: device,
            content: content, origin: origin, overwritten: overwritten
        )
    }

    private static func appendBlock(_ block: [UInt8], to bytes: inout [UInt8]) {
        bytes.append(UInt8(block.count >> 8))
        bytes.append(UInt8(block.count & 0xff))
        bytes.append(contentsOf: block)
    }

    private static func readBlock(_ reader: inout ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard reader.count >= 2 else { return nil }
        let length = Int(reader.removeFirst()) << 8 | Int(reader.removeFirst())
        guard reader.count >= length else { return nil }
        defer { reader = reader.dropFirst(length) }
        return reader.prefix(length)
    }
}

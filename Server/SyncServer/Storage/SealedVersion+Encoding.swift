import SyncCore

/// A compact binary form of an item's versions, for backends that keep them in one column.
///
/// Layout: format byte 1; entry count as 2 bytes big-endian; per version: deleted byte (0/1), the
/// canonical vector's length (2 bytes) and bytes, the blob's length (4 bytes) and bytes.
extension SealedVersion {
    package static func encode(_ versions: [SealedVersion]) -> [UInt8] {
        var bytes: [UInt8] = [1]
        bytes.reserveCapacity(3 + versions.reduce(0) { $0 + 7 + $1.payload.count + 16 * $1.vector.counters.count })
        append(UInt64(versions.count), width: 2, to: &bytes)
        for version in versions {
            bytes.append(version.isDeleted ? 1 : 0)
            let vector = version.vector.canonicalEncoding
            append(UInt64(vector.count), width: 2, to: &bytes)
            bytes += vector
            append(UInt64(version.payload.count), width: 4, to: &bytes)
            bytes += version.payload
        }
        return bytes
    }

    package static func decode(_ bytes: some Collection<UInt8>) throws -> [SealedVersion] {
        var reader = Array(bytes)[...]
        func read(_ width: Int) throws -> UInt64 {
            guard reader.count >= width else { throw SyncServerError(.storageFailure, "corrupt stored versions") }
            defer { reader = reader.dropFirst(width) }
            return reader.prefix(width).reduce(0) { $0 << 8 | UInt64($1) }
        }
        func take(_ count: Int) throws -> ArraySlice<UInt8> {
            guard reader.count >= count else { throw SyncServerError(.storageFailure, "corrupt stored versions") }
            defer { reader = reader.dropFirst(count) }
            return reader.prefix(count)
        }
        guard try read(1) == 1 else { throw SyncServerError(.storageFailure, "unknown stored versions format") }
        let count = try read(2)
        var versions: [SealedVersion] = []
        for _ in 0..<count {
            let deleted = try read(1) == 1
            let vector = try VersionVector(canonicalEncoding: take(Int(try read(2))))
            let blob = Array(try take(Int(try read(4))))
            versions.append(SealedVersion(vector: vector, isDeleted: deleted, payload: blob))
        }
        guard reader.isEmpty else { throw SyncServerError(.storageFailure, "corrupt stored versions") }
        return versions
    }

    private static func append(_ value: UInt64, width: Int, to bytes: inout [UInt8]) {
        for shift in stride(from: (width - 1) * 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }
}

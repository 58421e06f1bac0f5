/// The canonical byte encoding of a version vector, bound into every item blob's associated data.
///
/// Layout: one byte, the entry count (0...64); then, for each entry in ascending device-ID byte
/// order, one byte of ID length, the ID's ASCII bytes, and the counter as 8 bytes big-endian.
/// Zero counters never appear. Exactly one encoding exists per vector, and decoding rejects every
/// other byte string (unsorted, duplicate, zero counter, trailing bytes).
extension VersionVector {
    /// The vector's canonical bytes.
    public var canonicalEncoding: [UInt8] {
        let entries = sortedEntries
        var bytes: [UInt8] = [UInt8(entries.count)]
        for entry in entries {
            let id = Array(entry.device.rawValue.utf8)
            bytes.append(UInt8(id.count))
            bytes.append(contentsOf: id)
            withUnsafeBytes(of: entry.counter.bigEndian) { bytes.append(contentsOf: $0) }
        }
        return bytes
    }

    /// Decodes canonical bytes; throws ``VersionVectorEncodingError`` for anything else.
    public init(canonicalEncoding bytes: some Collection<UInt8>) throws(VersionVectorEncodingError) {
        var reader = Array(bytes)[...]
        guard let count = reader.popFirst(), Int(count) <= Self.maximumEntries else {
            throw VersionVectorEncodingError()
        }
        var counters: [DeviceID: UInt64] = [:]
        var previous: DeviceID?
        for _ in 0..<count {
            guard let length = reader.popFirst(), reader.count >= Int(length) + 8 else {
                throw VersionVectorEncodingError()
            }
            let idBytes = reader.prefix(Int(length))
            reader = reader.dropFirst(Int(length))
            guard let device = DeviceID(String(decoding: idBytes, as: UTF8.self)),
                Array(device.rawValue.utf8) == Array(idBytes)
            else { throw VersionVectorEncodingError() }
            let counter = reader.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            reader = reader.dropFirst(8)
            if let previous, !(previous < device) { throw VersionVectorEncodingError() }
            guard counter > 0 else { throw VersionVectorEncodingError() }
            counters[device] = counter
            previous = device
        }
        guard reader.isEmpty else { throw VersionVectorEncodingError() }
        self.init(counters)
    }
}

/// The bytes given are not a canonical version-vector encoding.
public struct VersionVectorEncodingError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String { "malformed version vector encoding" }
}

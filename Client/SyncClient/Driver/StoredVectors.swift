import Foundation
import GRDB
import SyncCore

/// How the state file stores version vectors: their canonical encoding as a BLOB, and a list of
/// them as `count (2) ‖ (len (2) ‖ canonical)…`, big-endian. Files written before this read as
/// JSON text, which is still accepted (decision 0056).
package enum StoredVectors {
    package static func encode(_ vector: VersionVector) -> Data { Data(vector.canonicalEncoding) }

    package static func encode(_ vectors: [VersionVector]) -> Data {
        var bytes: [UInt8] = []
        append(UInt16(vectors.count), to: &bytes)
        for vector in vectors {
            let encoded = vector.canonicalEncoding
            append(UInt16(encoded.count), to: &bytes)
            bytes += encoded
        }
        return Data(bytes)
    }

    package static func vector(_ value: DatabaseValue) throws -> VersionVector {
        switch value.storage {
        case .blob(let data): return try VersionVector(canonicalEncoding: data)
        case .string(let text): return try JSONDecoder().decode(VersionVector.self, from: Data(text.utf8))
        default: throw SyncClientError(.localStorage, "a stored version vector is damaged")
        }
    }

    package static func vectors(_ value: DatabaseValue) throws -> [VersionVector] {
        switch value.storage {
        case .blob(let data):
            var rest = [UInt8](data)[...]
            guard let count = take(2, from: &rest).map(integer) else { break }
            var vectors: [VersionVector] = []
            for _ in 0..<count {
                guard let length = take(2, from: &rest).map(integer), let encoded = take(length, from: &rest) else { break }
                vectors.append(try VersionVector(canonicalEncoding: encoded))
            }
            if vectors.count == count && rest.isEmpty { return vectors }
        case .string(let text):
            return try JSONDecoder().decode([VersionVector].self, from: Data(text.utf8))
        default:
            break
        }
        throw SyncClientError(.localStorage, "a stored version vector list is damaged")
    }

    private static func append(_ value: UInt16, to bytes: inout [UInt8]) {
        bytes += [UInt8(value >> 8), UInt8(value & 0xFF)]
    }

    private static func take(_ count: Int, from rest: inout ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard rest.count >= count else { return nil }
        defer { rest = rest.dropFirst(count) }
        return rest.prefix(count)
    }

    private static func integer(_ bytes: ArraySlice<UInt8>) -> Int { bytes.reduce(0) { $0 << 8 | Int($1) } }
}

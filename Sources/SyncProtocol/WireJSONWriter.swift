import Foundation
import SyncCore

/// A body that writes its own JSON: the document ``WireCoding``'s encoder makes of it (keys
/// sorted, slashes unescaped), byte for byte, without going through `JSONEncoder`.
public protocol WireJSONWritable: Encodable {
    /// The body's JSON.
    var wireJSON: [UInt8] { get }
}

/// An upload is the one body whose encoding shows in a profile: Foundation's encoder cost about
/// 9 µs an item of a first push (issue 35), mostly the generic containers around each base64 blob.
extension UploadRequest: WireJSONWritable {
    public var wireJSON: [UInt8] {
        var json = WireJSONWriter()
        json.bytes.reserveCapacity(items.reduce(64) { $0 + 160 + ($1.blob.bytes.count + 2) / 3 * 4 })
        json.raw("{\"cursor\":\(cursor),\"items\":")
        json.list("[", "]", items) { json, item in
            json.raw("{\"blob\":")
            json.base64(item.blob.bytes)
            json.raw(",\"deleted\":\(item.deleted),\"id\":")
            json.string(item.id.rawValue)
            json.raw(",\"vector\":")
            json.vector(item.vector)
            json.raw("}")
        }
        json.raw("}")
        return json.bytes
    }
}

/// Its answer is the one response body that shows in the server's profile (a third of the JSON
/// time of a first push's uploads).
extension UploadResponse: WireJSONWritable {
    public var wireJSON: [UInt8] {
        var json = WireJSONWriter()
        json.bytes.reserveCapacity(64 + results.count * 80)
        json.raw("{\"latestSequence\":\(latestSequence),\"results\":")
        json.list("[", "]", results) { json, result in
            json.raw("{\"id\":")
            json.string(result.id.rawValue)
            json.raw(",\"outcome\":")
            json.string(result.outcome.rawValue)
            if let sequence = result.sequence { json.raw(",\"sequence\":\(sequence)") }
            json.raw("}")
        }
        json.raw("}")
        return json.bytes
    }
}

/// A page of the feed: a new device's pull of 10,000 items reads 20 of them, and Foundation's
/// encoder cost the server about 14 µs an item of one (issue 35).
extension ChangesResponse: WireJSONWritable {
    public var wireJSON: [UInt8] {
        var json = WireJSONWriter()
        json.bytes.reserveCapacity(items.reduce(96) { $0 + $1.versions.reduce(64) { $0 + 96 + ($1.blob.bytes.count + 2) / 3 * 4 } })
        json.raw("{\"after\":\(after),\"collected\":\(collected),\"cursor\":\(cursor),")
        if let deletionsCollectedAt { json.raw("\"deletionsCollectedAt\":\(deletionsCollectedAt),") }
        json.raw("\"hasMore\":\(hasMore),\"items\":")
        json.list("[", "]", items) { json, item in
            json.raw("{\"id\":")
            json.string(item.id.rawValue)
            json.raw(",\"sequence\":\(item.sequence),\"versions\":")
            json.list("[", "]", item.versions) { json, version in
                json.raw("{\"blob\":")
                json.base64(version.blob.bytes)
                json.raw(",\"deleted\":\(version.deleted),\"vector\":")
                json.vector(version.vector)
                json.raw("}")
            }
            json.raw("}")
        }
        json.raw(",\"resync\":\(resync)}")
        return json.bytes
    }
}

/// Appends JSON text to a byte array.
package struct WireJSONWriter {
    package var bytes: [UInt8] = []

    package init() {}

    /// Text that needs no escaping (the document's punctuation, keys and numbers).
    @inlinable
    package mutating func raw(_ text: String) {
        bytes += text.utf8
    }

    /// `open`, then each element as `write` writes it, separated by commas, then `close`: an
    /// array, or an object written as its members (``WireJSONReader/list(_:_:_:)`` reads it).
    /// Inlinable, so that the state file's batch, written in another module, gets it specialized.
    @inlinable
    package mutating func list<Elements: Sequence>(
        _ open: String, _ close: String, _ elements: Elements, _ write: (inout Self, Elements.Element) -> Void
    ) {
        raw(open)
        var first = true
        for element in elements {
            if !first { raw(",") }
            first = false
            write(&self, element)
        }
        raw(close)
    }

    /// Bytes as a JSON string of strict base64, as `Base64Bytes` codes them.
    package mutating func base64(_ data: [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        raw(Base64.encode(data))
        bytes.append(UInt8(ascii: "\""))
    }

    /// A version vector as its coding writes it: an object of counters by device, in device order.
    package mutating func vector(_ vector: VersionVector) {
        list("{", "}", vector.sortedEntries) { json, entry in
            json.string(entry.device.rawValue)
            json.raw(":\(entry.counter)")
        }
    }

    /// A JSON string: quotes, backslashes and control characters escaped as `JSONEncoder` does,
    /// everything else (slashes, non-ASCII) as it is.
    package mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes += #"\""#.utf8
            case UInt8(ascii: "\\"): bytes += #"\\"#.utf8
            case 0x08: bytes += #"\b"#.utf8
            case 0x0C: bytes += #"\f"#.utf8
            case 0x0A: bytes += #"\n"#.utf8
            case 0x0D: bytes += #"\r"#.utf8
            case 0x09: bytes += #"\t"#.utf8
            case ..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes += #"\u00"#.utf8
                bytes += [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

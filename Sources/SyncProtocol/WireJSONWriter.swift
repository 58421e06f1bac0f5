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
        json.raw("{\"cursor\":\(cursor),\"items\":[")
        for (index, item) in items.enumerated() {
            if index > 0 { json.raw(",") }
            json.raw("{\"blob\":\"")
            json.raw(Base64.encode(item.blob.bytes))
            json.raw("\",\"deleted\":\(item.deleted),\"id\":")
            json.string(item.id.rawValue)
            json.raw(",\"vector\":")
            json.vector(item.vector)
            json.raw("}")
        }
        json.raw("]}")
        return json.bytes
    }
}

/// Its answer is the one response body that shows in the server's profile (a third of the JSON
/// time of a first push's uploads).
extension UploadResponse: WireJSONWritable {
    public var wireJSON: [UInt8] {
        var json = WireJSONWriter()
        json.bytes.reserveCapacity(64 + results.count * 80)
        json.raw("{\"latestSequence\":\(latestSequence),\"results\":[")
        for (index, result) in results.enumerated() {
            if index > 0 { json.raw(",") }
            json.raw("{\"id\":")
            json.string(result.id.rawValue)
            json.raw(",\"outcome\":")
            json.string(result.outcome.rawValue)
            if let sequence = result.sequence { json.raw(",\"sequence\":\(sequence)") }
            json.raw("}")
        }
        json.raw("]}")
        return json.bytes
    }
}

/// A page of the feed: a new device's pull of 10,000 items reads 20 of them, and Foundation's
/// encoder cost the server about 14 µs an item of one (issue 35).
extension ChangesResponse: WireJSONWritable {
    public var wireJSON: [UInt8] {
        var json = WireJSONWriter()
        json.bytes.reserveCapacity(items.reduce(96) { $0 + $1.versions.reduce(64) { $0 + 96 + ($1.blob.bytes.count + 2) / 3 * 4 } })
        json.raw("{\"cursor\":\(cursor),")
        if let deletionsCollectedAt { json.raw("\"deletionsCollectedAt\":\(deletionsCollectedAt),") }
        json.raw("\"hasMore\":\(hasMore),\"items\":[")
        for (index, item) in items.enumerated() {
            if index > 0 { json.raw(",") }
            json.raw("{\"id\":")
            json.string(item.id.rawValue)
            json.raw(",\"sequence\":\(item.sequence),\"versions\":[")
            for (position, version) in item.versions.enumerated() {
                if position > 0 { json.raw(",") }
                json.raw("{\"blob\":\"")
                json.raw(Base64.encode(version.blob.bytes))
                json.raw("\",\"deleted\":\(version.deleted),\"vector\":")
                json.vector(version.vector)
                json.raw("}")
            }
            json.raw("]}")
        }
        json.raw("]}")
        return json.bytes
    }
}

/// Appends JSON text to a byte array.
package struct WireJSONWriter {
    package var bytes: [UInt8] = []

    package init() {}

    /// Text that needs no escaping (the document's punctuation, keys and numbers).
    package mutating func raw(_ text: String) {
        bytes += text.utf8
    }

    /// A version vector as its coding writes it: an object of counters by device, in device order.
    package mutating func vector(_ vector: VersionVector) {
        raw("{")
        for (position, entry) in vector.sortedEntries.enumerated() {
            if position > 0 { raw(",") }
            string(entry.device.rawValue)
            raw(":\(entry.counter)")
        }
        raw("}")
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

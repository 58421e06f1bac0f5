import SyncCore

/// A body that reads its own JSON when it comes exactly as it writes it (``WireJSONWritable``).
///
/// Any other form (whitespace, keys in another order or unknown, an escape in a string, a number
/// with a fraction, anything malformed) is not read here: it is left to `JSONDecoder`, which
/// decides what it means or says what is wrong with it. So this reading accepts nothing the
/// decoder refuses and reads nothing otherwise than it does (``WireCoding/decode(_:from:)``).
public protocol WireJSONReadable: Decodable {
    /// The body, when `json` is exactly the document the type writes; nil for anything else.
    init?(wireJSON json: UnsafeBufferPointer<UInt8>)
}

/// An upload is the one request body whose decoding shows in the server's profile: Foundation's
/// decoder cost about 5 µs an item of a first push, a quarter of the server's time (issue 35).
extension UploadRequest: WireJSONReadable {
    public init?(wireJSON json: UnsafeBufferPointer<UInt8>) {
        var reader = WireJSONReader(json)
        guard reader.take("{\"cursor\":"), let cursor = reader.unsigned(), reader.take(",\"items\":"),
            let items = reader.list("[", "]", Self.item), reader.take("}"), reader.isAtEnd
        else { return nil }
        self.init(cursor: cursor, items: items)
    }

    private static func item(_ reader: inout WireJSONReader) -> UploadItem? {
        guard reader.take("{\"blob\":"), let blob = reader.base64(), reader.take(",\"deleted\":"), let deleted = reader.bool(),
            reader.take(",\"id\":"), let id = reader.string(), reader.take(",\"vector\":"), let vector = reader.vector(), reader.take("}")
        else { return nil }
        return UploadItem(id: ItemID(id), vector: vector, deleted: deleted, blob: Base64Bytes(blob))
    }
}

/// Its answer, read by each device at every push of a batch.
extension UploadResponse: WireJSONReadable {
    public init?(wireJSON json: UnsafeBufferPointer<UInt8>) {
        var reader = WireJSONReader(json)
        guard reader.take("{\"latestSequence\":"), let latestSequence = reader.unsigned(), reader.take(",\"results\":"),
            let results = reader.list("[", "]", Self.result), reader.take("}"), reader.isAtEnd
        else { return nil }
        self.init(results: results, latestSequence: latestSequence)
    }

    private static func result(_ reader: inout WireJSONReader) -> Result? {
        guard reader.take("{\"id\":"), let id = reader.string(), reader.take(",\"outcome\":"),
            let outcome = reader.string().flatMap(ServerMerge.Outcome.init(rawValue:))
        else { return nil }
        var sequence: UInt64?
        if reader.take(",\"sequence\":") {
            guard let number = reader.unsigned() else { return nil }
            sequence = number
        }
        return reader.take("}") ? Result(id: ItemID(id), outcome: outcome, sequence: sequence) : nil
    }
}

/// A page of the feed, read by a device at every pull.
extension ChangesResponse: WireJSONReadable {
    public init?(wireJSON json: UnsafeBufferPointer<UInt8>) {
        var reader = WireJSONReader(json)
        guard reader.take("{\"after\":"), let after = reader.unsigned(), reader.take(",\"collected\":"), let collected = reader.bool(),
            reader.take(",\"cursor\":"), let cursor = reader.unsigned(), reader.take(",")
        else { return nil }
        var collectedAt: Int64?
        if reader.take("\"deletionsCollectedAt\":") {
            guard let at = reader.signed(), reader.take(",") else { return nil }
            collectedAt = at
        }
        guard reader.take("\"hasMore\":"), let hasMore = reader.bool(), reader.take(",\"items\":"),
            let items = reader.list("[", "]", Self.item), reader.take(",\"resync\":"), let resync = reader.bool(), reader.take("}"),
            reader.isAtEnd
        else { return nil }
        self.init(
            after: after, resync: resync, collected: collected, items: items, cursor: cursor, hasMore: hasMore,
            deletionsCollectedAt: collectedAt)
    }

    private static func item(_ reader: inout WireJSONReader) -> FeedItem? {
        guard reader.take("{\"id\":"), let id = reader.string(), reader.take(",\"sequence\":"), let sequence = reader.unsigned(),
            reader.take(",\"versions\":"), let versions = reader.list("[", "]", Self.version), reader.take("}")
        else { return nil }
        return FeedItem(id: ItemID(id), sequence: sequence, versions: versions)
    }

    private static func version(_ reader: inout WireJSONReader) -> WireVersion? {
        guard reader.take("{\"blob\":"), let blob = reader.base64(), reader.take(",\"deleted\":"), let deleted = reader.bool(),
            reader.take(",\"vector\":"), let vector = reader.vector(), reader.take("}")
        else { return nil }
        return WireVersion(vector: vector, deleted: deleted, blob: Base64Bytes(blob))
    }
}

/// Reads JSON text in the one form ``WireJSONWriter`` writes it; each read is nil, and the reader
/// is then of no further use, when the text is not in that form.
package struct WireJSONReader {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var position = 0

    package init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    package var isAtEnd: Bool { position == bytes.count }

    /// Steps over `text` if it comes next.
    package mutating func take(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard bytes.count - position >= count else { return false }
        for offset in 0..<count where bytes[position + offset] != text.utf8Start[offset] { return false }
        position += count
        return true
    }

    /// `true` or `false`.
    package mutating func bool() -> Bool? {
        if take("true") { return true }
        if take("false") { return false }
        return nil
    }

    /// An unsigned integer in digits, without a leading zero, a sign, a fraction or an exponent.
    package mutating func unsigned() -> UInt64? {
        let start = position
        var value: UInt64 = 0
        while position < bytes.count, case let digit = bytes[position] &- UInt8(ascii: "0"), digit < 10 {
            let (times10, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times10.addingReportingOverflow(UInt64(digit))
            guard !overflow, !carry else { return nil }
            value = sum
            position += 1
        }
        let digits = position - start
        guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
        return value
    }

    /// A signed integer: ``unsigned()``, after a minus sign unless it is zero.
    package mutating func signed() -> Int64? {
        let negative = take("-")
        guard let magnitude = unsigned() else { return nil }
        if !negative { return Int64(exactly: magnitude) }
        guard magnitude > 0 else { return nil }
        return magnitude == UInt64(Int64.max) + 1 ? .min : Int64(exactly: magnitude).map { -$0 }
    }

    /// A string with no escape and no control character in it, in valid UTF-8.
    package mutating func string() -> String? {
        guard let text = quoted() else { return nil }
        return String(validating: text, as: UTF8.self)
    }

    /// A string of strict base64 (``Base64``), decoded.
    package mutating func base64() -> [UInt8]? {
        quoted().flatMap(Base64.decode)
    }

    /// An object of counters by device (``VersionVector``'s coding), each device once.
    package mutating func vector() -> VersionVector? {
        guard let entries = list("{", "}", Self.counter), entries.count <= VersionVector.maximumEntries else { return nil }
        let counters = Dictionary(entries, uniquingKeysWith: { first, _ in first })
        return counters.count == entries.count ? VersionVector(counters) : nil
    }

    /// One member of a vector: a device and its counter.
    private static func counter(_ reader: inout Self) -> (DeviceID, UInt64)? {
        guard let name = reader.string(), let device = DeviceID(name), reader.take(":"), let counter = reader.unsigned() else { return nil }
        return (device, counter)
    }

    /// `open`, then the elements `element` reads one after another, separated by commas, then
    /// `close`: an array, or an object read as its members.
    package mutating func list<Element>(_ open: StaticString, _ close: StaticString, _ element: (inout Self) -> Element?) -> [Element]? {
        guard take(open) else { return nil }
        var elements: [Element] = []
        if take(close) { return elements }
        repeat {
            guard let next = element(&self) else { return nil }
            elements.append(next)
        } while take(",")
        return take(close) ? elements : nil
    }

    /// The bytes between a pair of quotes, when none of them is a backslash or a control character.
    private mutating func quoted() -> UnsafeBufferPointer<UInt8>? {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { return nil }
        let start = position + 1
        var end = start
        while end < bytes.count {
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") {
                position = end + 1
                return UnsafeBufferPointer(rebasing: bytes[start..<end])
            }
            guard byte != UInt8(ascii: "\\"), byte >= 0x20 else { return nil }
            end += 1
        }
        return nil
    }
}

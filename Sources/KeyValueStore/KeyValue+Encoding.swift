import Foundation

/// The canonical binary form of a ``KeyValue`` (docs/decisions/0060): what the store keeps, what
/// its limits count, and what a synced version carries. One value has exactly one encoding.
///
/// `tag (1) ‖ payload`, lengths and counts 4-byte big-endian:
/// - `0x01` string: length ‖ UTF-8
/// - `0x02` integer: 8 bytes, big-endian two's complement
/// - `0x03` double: 8 bytes, big-endian IEEE 754 bits (every NaN as `0x7FF8000000000000`)
/// - `0x04` false, `0x05` true: no payload
/// - `0x06` data: length ‖ bytes
/// - `0x07` array: count ‖ elements
/// - `0x08` dictionary: count ‖ (length ‖ key UTF-8 ‖ value)…, keys in ascending UTF-8 byte order
extension KeyValue {
    /// Arrays and dictionaries nest at most this deep (the outermost value is depth 1).
    public static let maximumNestingDepth = 32

    enum Tag: UInt8 {
        case string = 1, integer, double, falseValue, trueValue, data, array, dictionary
    }

    /// The canonical bytes of this value.
    public var canonicalEncoding: [UInt8] {
        var bytes: [UInt8] = []
        append(to: &bytes)
        return bytes
    }

    /// The number of bytes of ``canonicalEncoding``, computed without building it.
    public var encodedSize: Int {
        switch self {
        case .string(let value): 5 + value.utf8.count
        case .integer, .double: 9
        case .bool: 1
        case .data(let value): 5 + value.count
        case .array(let values): values.reduce(5) { $0 + $1.encodedSize }
        case .dictionary(let entries): entries.reduce(5) { $0 + 4 + $1.key.utf8.count + $1.value.encodedSize }
        }
    }

    /// Decodes a canonical encoding; anything else (a truncated, padded, unsorted or too deeply
    /// nested encoding, invalid UTF-8) is refused.
    /// - Throws: ``KeyValueStoreError`` with code ``KeyValueStoreError/Code/corruptValue``.
    public init(canonicalEncoding bytes: some Collection<UInt8>) throws(KeyValueStoreError) {
        var reader = ByteReader(Array(bytes))
        guard let value = Self.read(&reader, depth: 1), reader.isAtEnd else {
            throw KeyValueStoreError(.corruptValue, "a stored value cannot be decoded")
        }
        self = value
    }

    /// The nesting depth of this value: 1 for a scalar or an empty collection.
    public var nestingDepth: Int {
        switch self {
        case .array(let values): 1 + (values.map(\.nestingDepth).max() ?? 0)
        case .dictionary(let entries): 1 + (entries.values.map(\.nestingDepth).max() ?? 0)
        default: 1
        }
    }

    private func append(to bytes: inout [UInt8]) {
        switch self {
        case .string(let value):
            bytes.append(Tag.string.rawValue)
            Self.appendLengthPrefixed(Array(value.utf8), to: &bytes)
        case .integer(let value):
            bytes.append(Tag.integer.rawValue)
            Self.appendBigEndian(UInt64(bitPattern: value), to: &bytes)
        case .double(let value):
            bytes.append(Tag.double.rawValue)
            Self.appendBigEndian(value.isNaN ? 0x7FF8_0000_0000_0000 : value.bitPattern, to: &bytes)
        case .bool(let value):
            bytes.append(value ? Tag.trueValue.rawValue : Tag.falseValue.rawValue)
        case .data(let value):
            bytes.append(Tag.data.rawValue)
            Self.appendLengthPrefixed(Array(value), to: &bytes)
        case .array(let values):
            bytes.append(Tag.array.rawValue)
            Self.appendBigEndian(UInt32(values.count), to: &bytes)
            for value in values { value.append(to: &bytes) }
        case .dictionary(let entries):
            bytes.append(Tag.dictionary.rawValue)
            Self.appendBigEndian(UInt32(entries.count), to: &bytes)
            for (key, value) in entries.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                Self.appendLengthPrefixed(Array(key.utf8), to: &bytes)
                value.append(to: &bytes)
            }
        }
    }

    static func appendLengthPrefixed(_ value: [UInt8], to bytes: inout [UInt8]) {
        appendBigEndian(UInt32(value.count), to: &bytes)
        bytes += value
    }

    static func appendBigEndian<Integer: FixedWidthInteger>(_ value: Integer, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { bytes += $0 }
    }

    private static func read(_ reader: inout ByteReader, depth: Int) -> KeyValue? {
        guard depth <= maximumNestingDepth, let tagByte = reader.byte(), let tag = Tag(rawValue: tagByte) else { return nil }
        switch tag {
        case .string:
            return reader.lengthPrefixed().flatMap { String(validating: $0, as: UTF8.self) }.map(KeyValue.string)
        case .integer:
            return reader.uint64().map { .integer(Int64(bitPattern: $0)) }
        case .double:
            guard let bits = reader.uint64() else { return nil }
            let value = Double(bitPattern: bits)
            return value.isNaN && bits != 0x7FF8_0000_0000_0000 ? nil : .double(value)
        case .falseValue: return .bool(false)
        case .trueValue: return .bool(true)
        case .data: return reader.lengthPrefixed().map { .data(Data($0)) }
        case .array:
            guard let count = reader.count() else { return nil }
            var values: [KeyValue] = []
            for _ in 0..<count {
                guard let value = read(&reader, depth: depth + 1) else { return nil }
                values.append(value)
            }
            return .array(values)
        case .dictionary:
            guard let count = reader.count() else { return nil }
            var entries: [String: KeyValue] = [:]
            var previous: [UInt8]?
            for _ in 0..<count {
                guard let keyBytes = reader.lengthPrefixed(), let key = String(validating: keyBytes, as: UTF8.self),
                    previous.map({ $0.lexicographicallyPrecedes(keyBytes) }) ?? true,
                    let value = read(&reader, depth: depth + 1)
                else { return nil }
                entries[key] = value
                previous = keyBytes
            }
            // Two keys with different bytes that Swift considers equal cannot round-trip.
            return entries.count == count ? .dictionary(entries) : nil
        }
    }
}

/// Reads a canonical encoding front to back; every read fails rather than run past the end.
struct ByteReader {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { position == bytes.count }

    mutating func byte() -> UInt8? {
        guard position < bytes.count else { return nil }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func take(_ count: Int) -> [UInt8]? {
        guard count >= 0, bytes.count - position >= count else { return nil }
        defer { position += count }
        return Array(bytes[position..<position + count])
    }

    mutating func uint32() -> UInt32? { take(4).map { $0.reduce(0) { $0 << 8 | UInt32($1) } } }

    mutating func uint64() -> UInt64? { take(8).map { $0.reduce(0) { $0 << 8 | UInt64($1) } } }

    /// A count of elements, each at least one byte: a count beyond the remaining bytes is refused.
    mutating func count() -> Int? {
        guard let count = uint32().map(Int.init), count <= bytes.count - position else { return nil }
        return count
    }

    mutating func lengthPrefixed() -> [UInt8]? { uint32().flatMap { take(Int($0)) } }
}

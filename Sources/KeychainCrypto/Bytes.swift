/// The integer and length-prefix encodings shared by every format in this module: integers are
/// big-endian, and every variable-length field is preceded by its length as a 4-byte big-endian
/// integer, so no two different field lists encode to the same bytes.
extension [UInt8] {
    package mutating func appendBigEndian<Integer: FixedWidthInteger>(_ value: Integer) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }

    package mutating func appendLengthPrefixed(_ bytes: some Collection<UInt8>) {
        appendBigEndian(UInt32(bytes.count))
        append(contentsOf: bytes)
    }

    /// Lowercase hexadecimal text of the bytes.
    package var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(count * 2)
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Parses lowercase or uppercase hexadecimal text; `nil` for anything else.
    package init?(hexString text: String) {
        let characters = Array(text.utf8)
        guard characters.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(characters.count / 2)
        var index = 0
        while index < characters.count {
            guard let high = Self.hexValue(characters[index]), let low = Self.hexValue(characters[index + 1]) else {
                return nil
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        self = bytes
    }

    private static func hexValue(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Reads the encodings written by the `[UInt8]` helpers; every read fails with `nil` on short input.
struct ByteReader {
    private var remaining: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) {
        remaining = bytes
    }

    var isAtEnd: Bool { remaining.isEmpty }
    var rest: ArraySlice<UInt8> { remaining }

    mutating func read(count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, remaining.count >= count else { return nil }
        defer { remaining = remaining.dropFirst(count) }
        return remaining.prefix(count)
    }

    mutating func readBigEndian<Integer: FixedWidthInteger>(_: Integer.Type) -> Integer? {
        guard let bytes = read(count: MemoryLayout<Integer>.size) else { return nil }
        return bytes.reduce(Integer.zero) { $0 << 8 | Integer($1) }
    }

    mutating func readLengthPrefixed() -> ArraySlice<UInt8>? {
        guard let length = readBigEndian(UInt32.self) else { return nil }
        return read(count: Int(length))
    }
}

import Foundation

/// Standard base64 (RFC 4648 section 4, padded), strict: decoding accepts only the canonical text
/// of the bytes (no whitespace, no missing padding, no non-zero trailing bits), so each byte
/// string has exactly one accepted text.
public enum Base64 {
    /// The base64 text of `bytes`.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        Data(bytes).base64EncodedString()
    }

    /// The bytes of strict base64 `text`, or nil.
    public static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8(decode)
    }

    /// The bytes of strict base64 text given as its UTF-8 bytes, or nil.
    public static func decode(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard text.count % 4 == 0 else { return nil }
        guard !text.isEmpty else { return [] }
        let padding = text[text.count - 1] != pad ? 0 : text[text.count - 2] != pad ? 1 : 2
        let values = Self.values
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count / 4 * 3)
        var index = 0
        var group: UInt32 = 0
        while index < text.count {
            let isLast = index + 4 == text.count
            let a = values[Int(text[index])], b = values[Int(text[index + 1])]
            let c = isLast && padding == 2 ? 0 : values[Int(text[index + 2])]
            let d = isLast && padding >= 1 ? 0 : values[Int(text[index + 3])]
            guard a | b | c | d < 64 else { return nil }
            group = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
            bytes.append(UInt8(truncatingIfNeeded: group >> 16))
            if !isLast || padding < 2 { bytes.append(UInt8(truncatingIfNeeded: group >> 8)) }
            if !isLast || padding < 1 { bytes.append(UInt8(truncatingIfNeeded: group)) }
            index += 4
        }
        // The bits the padding leaves unused are zero, or the text is another one of the same bytes.
        guard group & (padding == 2 ? 0xFFFF : padding == 1 ? 0xFF : 0) == 0 else { return nil }
        return bytes
    }

    private static let pad = UInt8(ascii: "=")

    /// Each byte's 6-bit value in the alphabet; 0xFF for a byte outside it (the padding too).
    private static let values: [UInt8] = {
        var values = [UInt8](repeating: 0xFF, count: 256)
        for (value, symbol) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            values[Int(symbol)] = UInt8(value)
        }
        return values
    }()
}

/// Standard base64 (RFC 4648 section 4, padded), strict: decoding refuses whitespace, missing
/// padding and non-zero trailing bits, so each byte string has exactly one accepted text.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xff, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    /// The base64 text of `bytes`.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        let input = Array(bytes)
        var output: [UInt8] = []
        output.reserveCapacity((input.count + 2) / 3 * 4)
        var index = 0
        while index < input.count {
            let chunk = input[index..<min(index + 3, input.count)]
            let value = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * UInt32($1.offset)) }
            for position in 0..<4 {
                output.append(position <= chunk.count ? alphabet[Int(value >> (18 - 6 * UInt32(position)) & 0x3f)] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The bytes of strict base64 `text`, or nil.
    public static func decode(_ text: String) -> [UInt8]? {
        let input = Array(text.utf8)
        guard input.count % 4 == 0 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(input.count / 4 * 3)
        var index = 0
        while index < input.count {
            let quad = input[index..<index + 4]
            let isLast = index + 4 == input.count
            let padding = quad.reversed().prefix { $0 == UInt8(ascii: "=") }.count
            guard padding <= 2, padding == 0 || isLast else { return nil }
            var value: UInt32 = 0
            for character in quad.prefix(4 - padding) {
                let digit = values[Int(character)]
                guard digit != 0xff else { return nil }
                value = value << 6 | UInt32(digit)
            }
            value <<= 6 * UInt32(padding)
            let produced = 3 - padding
            // Bits below the produced bytes must be zero.
            guard value & ((1 << (8 * UInt32(3 - produced))) - 1) == 0 else { return nil }
            for position in 0..<produced { output.append(UInt8(truncatingIfNeeded: value >> (16 - 8 * UInt32(position)))) }
            index += 4
        }
        return output
    }
}

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
        guard let data = Data(base64Encoded: text), data.base64EncodedString() == text else { return nil }
        return Array(data)
    }
}

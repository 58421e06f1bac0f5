/// The code two devices show during approval enrolment (docs/decisions/0271): the first 40 bits of
/// a key derived from the approval's transcript (``ApprovalTranscript/code``), printed as 8
/// Crockford base-32 characters in two groups of four (`7KQ2-M9XD`).
///
/// The new device commits to its keys before it sees the approver's, so a party in the middle
/// gets one try per request at a chance of 2⁻⁴⁰, however much it computes; the user compares the
/// code on both screens and confirms on both.
public struct ApprovalCode: Sendable, Equatable, CustomStringConvertible {
    /// The 8 characters, without dashes.
    public let characters: String

    private static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
    static let characterCount = 8

    /// The code of 5 bytes (40 bits), most significant first.
    init(bits bytes: [UInt8]) {
        let bits = bytes.prefix(5).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        characters = String((0..<Self.characterCount).map { Self.alphabet[Int(bits >> (35 - 5 * $0)) & 31] })
    }

    /// The code as printed: two groups of four characters.
    public var description: String {
        let chars = Array(characters)
        return String(chars[0..<4]) + "-" + String(chars[4..<8])
    }

    /// Whether `typed` is this code, ignoring case, dashes and spaces, and reading the letters
    /// Crockford's base 32 confuses (O, I, L) as the digits they stand for. Compared in constant time.
    public func matches(_ typed: String) -> Bool {
        let normalized: [Character] = typed.uppercased().compactMap { character in
            switch character {
            case "-", " ": nil
            case "O": "0"
            case "I", "L": "1"
            default: character
            }
        }
        return ConstantTime.equals(Array(String(normalized).utf8), Array(characters.utf8))
    }
}

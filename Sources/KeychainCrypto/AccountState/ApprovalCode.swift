import Crypto

/// The code two devices compare during approval enrolment (docs/decisions/0130): 60 bits of a hash
/// of the requesting device's public keys and a fresh nonce, printed as 12 Crockford base-32
/// characters in groups of four (`7KQ2-M9XD-4TRA`).
///
/// The requesting device prints it before any approver answers, so a server in the middle could
/// try substitute keys until one gives the same code; 60 bits put that out of reach within a
/// request's life, where a 6-digit code would fall in a second.
///
/// Hash: SHA-256 of `len(label) ‖ label ‖ len(account) ‖ account ‖ len(device) ‖ device ‖
/// len(signing key) ‖ signing key ‖ len(agreement key) ‖ agreement key ‖ len(nonce) ‖ nonce`,
/// label `synckeychain/v1/approval-code`; the code is its first 60 bits, most significant first.
public struct ApprovalCode: Sendable, Equatable, CustomStringConvertible {
    /// The 12 characters, without dashes.
    public let characters: String

    private static let label = "synckeychain/v1/approval-code"
    private static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")

    /// The code of a request.
    public init(account: String, device: String, signingKey: [UInt8], agreementKey: [UInt8], nonce: [UInt8]) {
        var message: [UInt8] = []
        message.appendLengthPrefixed(Self.label.utf8)
        message.appendLengthPrefixed(account.utf8)
        message.appendLengthPrefixed(device.utf8)
        message.appendLengthPrefixed(signingKey)
        message.appendLengthPrefixed(agreementKey)
        message.appendLengthPrefixed(nonce)
        let digest = Array(SHA256.hash(data: message))
        let bits = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } >> 4
        characters = String((0..<12).map { Self.alphabet[Int(bits >> (55 - 5 * $0)) & 31] })
    }

    /// The code as printed: three groups of four characters.
    public var description: String {
        let chars = Array(characters)
        return [chars[0..<4], chars[4..<8], chars[8..<12]].map { String($0) }.joined(separator: "-")
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
        let typedBytes = Array(String(normalized).utf8)
        let expected = Array(characters.utf8)
        guard typedBytes.count == expected.count else { return false }
        return zip(typedBytes, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

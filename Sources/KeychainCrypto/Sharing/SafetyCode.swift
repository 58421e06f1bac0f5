/// The code two people compare once, in person or on a call, before their accounts trust each
/// other's identity (decision 0282): 60 digits in 12 groups of 5, 30 from each account's
/// ``AccountIdentityCard/fingerprint`` (six 40-bit pieces, each modulo 100,000), the account whose
/// name sorts first giving the first half. Both people see the same code; a server that gave either
/// of them another key would have to find a key whose 30 digits (about 100 bits) match.
public struct SafetyCode: Sendable, Equatable, CustomStringConvertible {
    /// The 60 digits, without spaces.
    public let digits: String

    /// The code between the accounts of `one` and `other`, in either order.
    public init(_ one: AccountIdentityCard, _ other: AccountIdentityCard) {
        let (first, second) = Self.ordered(one, other)
        digits = Self.digits(of: first.fingerprint) + Self.digits(of: second.fingerprint)
    }

    private static func ordered(_ one: AccountIdentityCard, _ other: AccountIdentityCard) -> (AccountIdentityCard, AccountIdentityCard) {
        let a = Array(one.account.utf8)
        let b = Array(other.account.utf8)
        if a != b { return a.lexicographicallyPrecedes(b) ? (one, other) : (other, one) }
        return one.fingerprint.lexicographicallyPrecedes(other.fingerprint) ? (one, other) : (other, one)
    }

    private static func digits(of fingerprint: [UInt8]) -> String {
        (0..<6).map { piece in
            let value = fingerprint[(piece * 5)..<(piece * 5 + 5)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } % 100_000
            let text = String(value)
            return String(repeating: "0", count: 5 - text.count) + text
        }.joined()
    }

    /// The code as shown: 12 groups of 5 digits.
    public var description: String {
        let characters = Array(digits)
        return stride(from: 0, to: characters.count, by: 5).map { String(characters[$0..<($0 + 5)]) }.joined(separator: " ")
    }

    /// Whether `typed` is this code, ignoring spaces and dashes; compared in constant time.
    public func matches(_ typed: String) -> Bool {
        let normalized = typed.filter { $0 != " " && $0 != "-" }
        return ConstantTime.equals(Array(normalized.utf8), Array(digits.utf8))
    }
}

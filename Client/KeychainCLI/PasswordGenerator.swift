/// New passwords, drawn with `SystemRandomNumberGenerator` (the kernel's getrandom), every
/// character uniformly from its set.
///
/// The default is Apple's strong-password format, `xxxxxx-xxxxxx-xxxxxx`: eighteen characters in
/// three groups of six, lowercase letters and digits with one uppercase letter and one digit at
/// two random places (about 99 bits). The other sets give a password of any length from 1 to 1,024; one that
/// has several classes of characters (`alphanumeric`, `ascii`) holds at least one of each when it
/// is long enough to, drawn again until it does.
enum PasswordGenerator {
    /// The character sets `--charset` names.
    enum Charset: String, CaseIterable {
        /// Apple's format (fixed length).
        case apple
        /// Lowercase and uppercase letters and digits.
        case alphanumeric
        /// Every printable ASCII character but the space.
        case ascii
        /// Lowercase letters and digits.
        case lowercase
        /// Digits (a PIN).
        case digits
        /// Lowercase hexadecimal digits.
        case hex

        /// The classes of characters whose every one a password of this set holds (when long enough).
        var classes: [[Character]] {
            switch self {
            case .apple, .alphanumeric: [PasswordGenerator.lower, PasswordGenerator.upper, PasswordGenerator.digits]
            case .ascii: [PasswordGenerator.lower, PasswordGenerator.upper, PasswordGenerator.digits, PasswordGenerator.symbols]
            case .lowercase: [PasswordGenerator.lower, PasswordGenerator.digits]
            case .digits: [PasswordGenerator.digits]
            case .hex: [PasswordGenerator.digits + Array("abcdef")]
            }
        }
    }

    static let lower = Array("abcdefghijklmnopqrstuvwxyz")
    static let upper = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    static let digits = Array("0123456789")
    static let symbols = Array("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
    static let lengths = 1...1024

    /// Apple's format: `xxxxxx-xxxxxx-xxxxxx`.
    static func apple<Generator: RandomNumberGenerator>(using generator: inout Generator) -> String {
        let rest = lower + digits
        var characters = (0..<18).map { _ in rest.randomElement(using: &generator)! }
        let uppercase = Int.random(in: 0..<18, using: &generator)
        var digit = Int.random(in: 0..<17, using: &generator)
        if digit >= uppercase { digit += 1 }
        characters[uppercase] = upper.randomElement(using: &generator)!
        characters[digit] = digits.randomElement(using: &generator)!
        return [characters[0..<6], characters[6..<12], characters[12..<18]].map { String($0) }.joined(separator: "-")
    }

    /// `length` characters of `charset` (not ``Charset/apple``).
    static func password<Generator: RandomNumberGenerator>(length: Int, charset: Charset, using generator: inout Generator) -> String {
        let classes = charset.classes
        let alphabet = classes.flatMap { $0 }
        while true {
            let characters = (0..<length).map { _ in alphabet.randomElement(using: &generator)! }
            // Every class, when there is room for each: drawn again otherwise (uniform over the rest).
            if length < classes.count || classes.allSatisfy({ members in characters.contains(where: members.contains) }) {
                return String(characters)
            }
        }
    }
}

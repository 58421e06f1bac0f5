/// A rough strength estimate of a password (decision 0269), made on this device with nothing sent
/// anywhere: a new account password, which derives the key that wraps every account key, is
/// refused when the first guesses of an offline attack find it; `keychain audit` calls the user's
/// stored passwords weak by the same measure (decision 0274).
///
/// Refused: fewer than ``minimumLength`` characters; a password that is, once lower-cased and
/// with look-alike digits and symbols read as letters (`P@ssw0rd` is `password`) and digits and
/// symbols at its end dropped (`monkey123!` is `monkey`), one of the most common passwords
/// (``CommonPasswords``) or the account's name; and an estimate below ``minimumBits``, where each
/// character counts the bits of its class's alphabet (lower case, upper case, digits, symbols)
/// unless it repeats the previous character or is next to it in the alphabet (`aaaa`, `abcd`,
/// `4321`), which counts one bit.
package struct PasswordStrength: Sendable, Equatable {
    package static let minimumLength = 8
    package static let minimumBits = 36.0

    /// Why a password is refused.
    package enum Weakness: Sendable, Equatable {
        /// Fewer than ``minimumLength`` characters (this many).
        case tooShort(Int)
        /// One of the most common passwords (`changed`: with a few characters changed or added).
        case common(word: String, changed: Bool)
        /// The account's name.
        case accountName
        /// An estimate below ``minimumBits``.
        case easyToGuess
    }

    /// The estimate in bits.
    package var bits: Double
    /// Why the password is refused; nil when it is strong enough.
    package var weakness: Weakness?

    package init(_ password: String, account: String? = nil) {
        let characters = Array(password.unicodeScalars)
        bits = Self.estimate(characters)
        if characters.count < Self.minimumLength {
            weakness = .tooShort(characters.count)
        } else if let word = Self.commonWord(in: password) {
            weakness = .common(word: word, changed: word != password.lowercased())
        } else if let account, !account.isEmpty, Self.normalized(password) == Self.normalized(account) {
            weakness = .accountName
        } else if bits < Self.minimumBits {
            weakness = .easyToGuess
        }
    }

    /// Why the password is refused, for people; nil when it is strong enough.
    package var refusal: String? {
        switch weakness {
        case nil: nil
        case .tooShort(let count): "it has \(count) character\(count == 1 ? "" : "s"); at least \(Self.minimumLength) are needed"
        case .common(_, false): "it is one of the most common passwords"
        case .common(let word, true): "it is a common password (\"\(word)\") with a few characters changed or added"
        case .accountName: "it is the account's name"
        case .easyToGuess:
            "it is too easy to guess (an estimated \(Int(bits.rounded())) bits, at least \(Int(Self.minimumBits)) are needed: repeated or consecutive characters count little)"
        }
    }

    /// The common password `password` is made of, if any.
    static func commonWord(in password: String) -> String? {
        let lower = password.lowercased()
        if CommonPasswords.list.contains(lower) { return lower }
        let base = normalized(password)
        return base.count >= 4 && CommonPasswords.list.contains(base) ? base : nil
    }

    /// Lower case, look-alikes read as letters, and the digits and symbols at the end dropped.
    static func normalized(_ text: String) -> String {
        let lookAlikes: [Character: Character] = ["0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "!": "i"]
        var characters = Array(text.lowercased())
        while let last = characters.last, !last.isLetter { characters.removeLast() }
        return String(characters.map { lookAlikes[$0] ?? $0 })
    }

    static func estimate(_ characters: [Unicode.Scalar]) -> Double {
        var bits = 0.0
        var previous: Unicode.Scalar?
        for character in characters {
            let step = previous.map { abs(Int(character.value) - Int($0.value)) }
            bits += step.map { $0 <= 1 } == true ? 1 : poolBits(character)
            previous = character
        }
        return bits
    }

    private static func poolBits(_ character: Unicode.Scalar) -> Double {
        switch character.value {
        case 0x61...0x7A, 0x41...0x5A: return 4.7  // 26 letters
        case 0x30...0x39: return 3.32  // 10 digits
        case 0x20...0x7E: return 5.0  // 33 symbols and the space
        default: return 6.0  // beyond ASCII
        }
    }
}

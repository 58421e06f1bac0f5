/// The one escaping function of everything `keychain` prints (decision 0263): a value from the
/// keychain, a file or another device (a label, an account, a pass entry's name) can hold quotes,
/// newlines or terminal escape sequences; printed as it is, it could break a line of output into
/// two, forge another attribute, or drive the terminal. Every printed value goes through
/// ``escape(_:_:)``; only what a verb is asked to print alone, byte for byte (`find … -w`,
/// `kv get`, `export`'s JSON, which JSON escapes), is not.
enum TextEscaping {
    /// Where the text goes.
    enum Context {
        /// Inside double quotes: `\`, `"` and control characters escaped (attribute values).
        case quoted
        /// A column of tab-separated output: `\` and control characters (tabs, newlines) escaped.
        case cell
        /// A one-line message on stderr: newlines and tabs become spaces, other control
        /// characters are escaped, the rest is left as it is.
        case message
    }

    /// `text` made safe for `context`: `\n`, `\r`, `\t` for those characters, `\u{…}` for every
    /// other control character (C0, DEL, C1), line and paragraph separator and bidirectional
    /// control, `\\` and `\"` where the context needs them. Other characters, any script or
    /// emoji, are kept.
    static func escape(_ text: String, _ context: Context) -> String {
        guard text.unicodeScalars.contains(where: { needsEscape($0, context) }) else { return text }
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar, context) else {
                escaped.append(scalar)
                continue
            }
            let replacement: String = switch scalar {
            case "\n" where context == .message, "\t" where context == .message, "\r" where context == .message: " "
            case "\n": "\\n"
            case "\r": "\\r"
            case "\t": "\\t"
            case "\\": "\\\\"
            case "\"": "\\\""
            default: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            }
            escaped.append(contentsOf: replacement.unicodeScalars)
        }
        return String(escaped)
    }

    /// `"text"`, escaped for the inside of the quotes.
    static func quoted(_ text: String) -> String {
        "\"" + escape(text, .quoted) + "\""
    }

    private static func needsEscape(_ scalar: Unicode.Scalar, _ context: Context) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true
        // Line and paragraph separators, left-to-right/right-to-left marks, embeddings,
        // overrides and isolates: they move or hide what follows on a terminal.
        case 0x2028, 0x2029, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        case 0x5C: return context != .message
        case 0x22: return context == .quoted
        default: return false
        }
    }
}

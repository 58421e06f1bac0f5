import ArgumentParser
import Foundation
import KeyValueStore

/// How the kv verbs read values from the command line and print them.
enum KeyValueText {
    /// The value `text` means under the type flags (a string when none is given).
    static func parse(_ text: String, int: Bool, double: Bool, bool: Bool, data: Bool, json: Bool) throws -> KeyValue {
        let chosen = [int, double, bool, data, json].filter { $0 }.count
        guard chosen <= 1 else { throw ValidationError("give at most one of --int, --double, --bool, --data, --json") }
        if int {
            guard let value = Int64(text) else { throw ValidationError("the value is not a 64-bit integer") }
            return .integer(value)
        }
        if double {
            guard let value = Double(text) else { throw ValidationError("the value is not a number") }
            // `nan`, `inf` and numbers beyond the double's range (1e400 reads as infinity) have no
            // JSON form and no meaning as a preference: the store refuses them too.
            guard value.isFinite else { throw ValidationError("the value is not a finite number (not nan, inf, or beyond ±1.8e308)") }
            return .double(value)
        }
        if bool {
            switch text.lowercased() {
            case "true", "yes", "1": return .bool(true)
            case "false", "no", "0": return .bool(false)
            default: throw ValidationError("the value is not true or false")
            }
        }
        if data {
            guard let value = Data(base64Encoded: text) else { throw ValidationError("the value is not base64") }
            return .data(value)
        }
        if json {
            // Refused before decoding: the decoder's cost grows with the square of the depth (each
            // level probes each type, and each failed probe carries the path), up to its own limit
            // of 512, seconds for a 3 KB value; the store takes 32 levels at most anyway.
            guard !Self.nestsDeeper(thanJSON: text.utf8, KeyValue.maximumNestingDepth) else {
                throw ValidationError("the value nests deeper than \(KeyValue.maximumNestingDepth) levels")
            }
            do {
                return try JSONDecoder().decode(PlainJSON.self, from: Data(text.utf8)).value
            } catch {
                throw ValidationError("the value is not JSON without null")
            }
        }
        return .string(text)
    }

    /// Whether JSON text opens more than `limit` arrays and objects inside one another (brackets
    /// inside strings do not count); one pass, whatever the text.
    static func nestsDeeper(thanJSON text: some Sequence<UInt8>, _ limit: Int) -> Bool {
        var depth = 0
        var inString = false
        var escaped = false
        for byte in text {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > limit { return true }
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return false
    }

    /// A value for people: text as it is, numbers and booleans as literals, data in base64,
    /// arrays and dictionaries as JSON (data in them as base64 strings).
    static func display(_ value: KeyValue) -> String {
        switch value {
        case .string(let text): text
        case .integer(let number): String(number)
        case .double(let number): String(number)
        case .bool(let flag): String(flag)
        case .data(let bytes): bytes.base64EncodedString()
        case .array, .dictionary: (try? encoder.encode(PlainJSON(value))).map { String(decoding: $0, as: UTF8.self) } ?? ""
        }
    }

    /// The typed JSON form of ``KeyValue``'s Codable conformance (of a value, or of a dictionary
    /// of them), keys sorted. A non-finite double, which the store no longer takes but an earlier
    /// build could store, is written as the string `"nan"`, `"inf"` or `"-inf"` (`{"double":"nan"}`),
    /// as the text form prints it, rather than failing the whole output.
    static func typedJSON(_ value: some Encodable) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return encoder
    }
}

/// Plain JSON as a ``KeyValue``: a whole number that fits becomes an integer, any other number a
/// double; null is refused.
private struct PlainJSON: Codable {
    let value: KeyValue

    init(_ value: KeyValue) { self.value = value }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let flag = try? container.decode(Bool.self) {
            value = .bool(flag)
        } else if let number = try? container.decode(Int64.self) {
            value = .integer(number)
        } else if let number = try? container.decode(Double.self) {
            value = .double(number)
        } else if let text = try? container.decode(String.self) {
            value = .string(text)
        } else if let elements = try? container.decode([PlainJSON].self) {
            value = .array(elements.map(\.value))
        } else {
            value = .dictionary(try container.decode([String: PlainJSON].self).mapValues(\.value))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch value {
        case .string(let text): try container.encode(text)
        case .integer(let number): try container.encode(number)
        case .double(let number): try container.encode(number)
        case .bool(let flag): try container.encode(flag)
        case .data(let bytes): try container.encode(bytes.base64EncodedString())
        case .array(let elements): try container.encode(elements.map(PlainJSON.init))
        case .dictionary(let entries): try container.encode(entries.mapValues(PlainJSON.init))
        }
    }
}

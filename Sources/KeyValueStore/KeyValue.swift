import Foundation

/// A value in a key-value store: the property-list types of `NSUbiquitousKeyValueStore`.
///
/// Codable as a one-key JSON object naming the type, e.g. `{"int":5}`, `{"data":"AAE="}` (base64),
/// `{"array":[{"bool":true}]}`, so that integers, doubles and data survive a JSON round trip. The
/// canonical binary form that is stored and synced is ``canonicalEncoding`` (docs/decisions/0060).
public enum KeyValue: Hashable, Sendable {
    /// Text.
    case string(String)
    /// A 64-bit signed integer.
    case integer(Int64)
    /// A double-precision number.
    case double(Double)
    /// A boolean.
    case bool(Bool)
    /// Bytes.
    case data(Data)
    /// An ordered list of values.
    case array([KeyValue])
    /// Values by string key.
    case dictionary([String: KeyValue])

    /// The type's name as the CLI and the Codable form spell it.
    public var typeName: String {
        switch self {
        case .string: "string"
        case .integer: "int"
        case .double: "double"
        case .bool: "bool"
        case .data: "data"
        case .array: "array"
        case .dictionary: "dictionary"
        }
    }

    /// The text, when this is a string.
    public var stringValue: String? { if case .string(let value) = self { value } else { nil } }
    /// The integer, when this is an integer.
    public var integerValue: Int64? { if case .integer(let value) = self { value } else { nil } }
    /// The number, when this is a double.
    public var doubleValue: Double? { if case .double(let value) = self { value } else { nil } }
    /// The boolean, when this is a boolean.
    public var boolValue: Bool? { if case .bool(let value) = self { value } else { nil } }
    /// The bytes, when this is data.
    public var dataValue: Data? { if case .data(let value) = self { value } else { nil } }
    /// The elements, when this is an array.
    public var arrayValue: [KeyValue]? { if case .array(let value) = self { value } else { nil } }
    /// The entries, when this is a dictionary.
    public var dictionaryValue: [String: KeyValue]? { if case .dictionary(let value) = self { value } else { nil } }

    /// False when this is, or an array or dictionary in it holds, a double that is NaN or
    /// infinite. A store refuses to set such a value; one stored by an earlier build, or synced
    /// from one, still decodes.
    public var isFinite: Bool {
        switch self {
        case .double(let number): number.isFinite
        case .array(let values): values.allSatisfy(\.isFinite)
        case .dictionary(let entries): entries.values.allSatisfy(\.isFinite)
        case .string, .integer, .bool, .data: true
        }
    }
}

extension KeyValue: Codable {
    private struct TypeKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Decodes the one-key typed form.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: TypeKey.self)
        guard container.allKeys.count == 1, let key = container.allKeys.first else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "a value is an object with exactly one type key"))
        }
        switch key.stringValue {
        case "string": self = .string(try container.decode(String.self, forKey: key))
        case "int": self = .integer(try container.decode(Int64.self, forKey: key))
        case "double": self = .double(try container.decode(Double.self, forKey: key))
        case "bool": self = .bool(try container.decode(Bool.self, forKey: key))
        case "data": self = .data(try container.decode(Data.self, forKey: key))
        case "array": self = .array(try container.decode([KeyValue].self, forKey: key))
        case "dictionary": self = .dictionary(try container.decode([String: KeyValue].self, forKey: key))
        default:
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "unknown value type")
        }
    }

    /// Encodes the one-key typed form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: TypeKey.self)
        let key = TypeKey(stringValue: typeName)
        switch self {
        case .string(let value): try container.encode(value, forKey: key)
        case .integer(let value): try container.encode(value, forKey: key)
        case .double(let value): try container.encode(value, forKey: key)
        case .bool(let value): try container.encode(value, forKey: key)
        case .data(let value): try container.encode(value, forKey: key)
        case .array(let value): try container.encode(value, forKey: key)
        case .dictionary(let value): try container.encode(value, forKey: key)
        }
    }
}

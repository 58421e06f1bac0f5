import Foundation
import KeychainModel

/// The product's own export (`keychain export --format json`): every item with all its
/// attributes and its secret, so that `import --format json` gives back exactly what was exported.
///
/// Version 2 (decision 0263) writes each item as one flat object of named fields, readable with
/// `jq`: `class` (`generic-password`, …), the attributes under the names `find` and `dump-keychain
/// --json` use (`service`, `account`, `label`, `access_group`, `accessible`, `synchronizable`,
/// `created`, `modified`, …; dates in ISO 8601 UTC with every digit needed to give the same date
/// back, ``ExportTimestamp``; bytes as UTF-8 text, or base64 under `NAME_base64` when they are not
/// UTF-8), and the secret as `data` (text) or `data_base64`. Version 1 (the attributes' own
/// Codable form, `{"string":{"_0":…}}`, the secret in base64) is still read.
struct ExportDocument {
    static let formatName = "synckeychain-export"
    static let version = 2

    var items: [Item]

    init(_ items: [Item]) {
        self.items = items
    }

    /// The document: `{"format": …, "version": 2, "items": [{…}, …]}`, keys sorted.
    func encoded() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(Written(format: Self.formatName, version: Self.version, items: items.map(Entry.init)))) + [UInt8(ascii: "\n")]
    }

    /// Reads an export of version 1 or 2; errors name the item and field, never a value.
    static func decode(_ text: String) throws -> [Item] {
        let data = Data(text.utf8)
        let header: Header
        do {
            header = try JSONDecoder().decode(Header.self, from: data)
        } catch let error as DecodingError {
            throw KeychainError(.param, "not a keychain export (\(where: error))")
        }
        guard header.format == formatName, header.version == 1 || header.version == 2 else {
            throw KeychainError(.param, "not a keychain export of a version this build reads")
        }
        do {
            if header.version == 1 { return try JSONDecoder().decode(LegacyDocument.self, from: data).decodedItems() }
            return try JSONDecoder().decode(Written.self, from: data).items.map(\.item)
        } catch let error as DecodingError {
            throw KeychainError(.param, "not a keychain export (\(where: error))")
        }
    }

    /// What every version has.
    private struct Header: Decodable {
        var format: String
        var version: Int
    }

    /// Version 2 as written and read.
    private struct Written: Codable {
        var format: String
        var version: Int
        var items: [Entry]
    }

    /// One item of version 2: a flat object of named fields.
    struct Entry: Codable {
        var item: Item

        init(_ item: Item) { self.item = item }

        /// A field's name, any string.
        struct Field: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(_ name: String) { stringValue = name }
            init?(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        static let classNames: [ItemClass: String] = [
            .genericPassword: "generic-password", .internetPassword: "internet-password", .certificate: "certificate", .key: "key",
        ]

        static let attributesByName: [String: Attribute] = Dictionary(uniqueKeysWithValues: ItemPrinter.names.map { ($0.value, $0.key) })

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Field.self)
            try container.encode(Self.classNames[item.itemClass]!, forKey: Field("class"))
            for attribute in item.attributes.present {
                let name = ItemPrinter.names[attribute] ?? attribute.rawValue
                switch item.attributes[attribute]! {
                case .string(let text):
                    try container.encode(attribute == .accessible ? Accessibility(rawValue: text)?.name ?? text : text, forKey: Field(name))
                case .data(let bytes):
                    if let text = String(validating: bytes, as: UTF8.self) {
                        try container.encode(text, forKey: Field(name))
                    } else {
                        try container.encode(Data(bytes).base64EncodedString(), forKey: Field(name + "_base64"))
                    }
                case .integer(let value): try container.encode(value, forKey: Field(name))
                case .bool(let flag): try container.encode(flag, forKey: Field(name))
                case .date(let seconds): try container.encode(ExportTimestamp.format(seconds), forKey: Field(name))
                }
            }
            if let data = item.data {
                if let text = String(validating: data, as: UTF8.self) {
                    try container.encode(text, forKey: Field("data"))
                } else {
                    try container.encode(Data(data).base64EncodedString(), forKey: Field("data_base64"))
                }
            }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Field.self)
            let className = try container.decode(String.self, forKey: Field("class"))
            guard let itemClass = Self.classNames.first(where: { $0.value == className })?.key ?? ItemClass(rawValue: className) else {
                throw DecodingError.dataCorruptedError(forKey: Field("class"), in: container, debugDescription: "unknown class")
            }
            var attributes = ItemAttributes()
            var data: [UInt8]?
            for key in container.allKeys where key.stringValue != "class" {
                let name = key.stringValue
                if name == "data" || name == "data_base64" {
                    data = try Self.bytes(container, key, base64: name == "data_base64")
                    continue
                }
                let base64 = name.hasSuffix("_base64")
                let attributeName = base64 ? String(name.dropLast("_base64".count)) : name
                guard let attribute = Self.attributesByName[attributeName] ?? Attribute(rawValue: attributeName), !base64 || attribute.kind == .data
                else { throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "unknown field") }
                switch attribute.kind {
                case .string:
                    let text = try container.decode(String.self, forKey: key)
                    if attribute == .accessible {
                        guard let accessibility = Accessibility(argument: text) else {
                            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "unknown accessibility")
                        }
                        attributes.accessible = accessibility
                    } else {
                        attributes[attribute] = .string(text)
                    }
                case .data: attributes[attribute] = .data(try Self.bytes(container, key, base64: base64))
                case .integer: attributes[attribute] = .integer(try container.decode(Int64.self, forKey: key))
                case .bool: attributes[attribute] = .bool(try container.decode(Bool.self, forKey: key))
                case .date:
                    guard let seconds = ExportTimestamp.parse(try container.decode(String.self, forKey: key)) else {
                        throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not an ISO 8601 UTC date")
                    }
                    attributes[attribute] = .date(seconds)
                }
            }
            item = Item(itemClass: itemClass, attributes: attributes, data: data)
        }

        private static func bytes(_ container: KeyedDecodingContainer<Field>, _ key: Field, base64: Bool) throws -> [UInt8] {
            let text = try container.decode(String.self, forKey: key)
            guard base64 else { return Array(text.utf8) }
            guard let decoded = Data(base64Encoded: text) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not base64")
            }
            return Array(decoded)
        }
    }

    /// Version 1: each item's attributes in `ItemAttributes`'s own Codable form, the secret in base64.
    private struct LegacyDocument: Decodable {
        struct Entry: Decodable {
            var itemClass: ItemClass
            var attributes: ItemAttributes
            var data: String?

            enum CodingKeys: String, CodingKey {
                case itemClass = "class", attributes, data
            }
        }

        var items: [Entry]

        func decodedItems() throws -> [Item] {
            try items.enumerated().map { index, entry in
                var data: [UInt8]?
                if let text = entry.data {
                    guard let decoded = Data(base64Encoded: text) else { throw KeychainError(.param, "item \(index + 1): data is not base64") }
                    data = Array(decoded)
                }
                return Item(itemClass: entry.itemClass, attributes: entry.attributes, data: data)
            }
        }
    }
}

extension String.StringInterpolation {
    /// Where a decoding error happened: item number and field names, never the value.
    mutating func appendInterpolation(where error: DecodingError) {
        let path: [any CodingKey] = switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .keyNotFound(_, let context), .dataCorrupted(let context):
            context.codingPath
        @unknown default: []
        }
        var names = path.map { key in key.intValue.map { "item \($0 + 1)" } ?? key.stringValue }
        if case .keyNotFound(let key, _) = error { names.append(key.stringValue) }
        // This file's own refusals of a field ("unknown field", "not base64"…) say what is wrong.
        if case .dataCorrupted(let context) = error, !path.isEmpty, context.debugDescription.count < 40 {
            names.append(context.debugDescription)
        }
        appendLiteral(names.isEmpty ? "malformed JSON" : "at " + names.joined(separator: " / "))
    }
}

import Foundation
import KeychainModel

/// The product's own export (`keychain export --format json`): every item with all its
/// attributes (typed, dates included) and its secret in base64, so that `import --format json`
/// gives back exactly what was exported.
struct ExportDocument: Codable {
    struct Entry: Codable {
        var itemClass: ItemClass
        var attributes: ItemAttributes
        /// The secret, base64; absent for an item without data.
        var data: String?

        enum CodingKeys: String, CodingKey {
            case itemClass = "class", attributes, data
        }
    }

    static let formatName = "synckeychain-export"

    var format = formatName
    var version = 1
    var items: [Entry]

    init(_ items: [Item]) {
        self.items = items.map { Entry(itemClass: $0.itemClass, attributes: $0.attributes, data: $0.data.map { Data($0).base64EncodedString() }) }
    }

    func encoded() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return Array(try encoder.encode(self)) + [UInt8(ascii: "\n")]
    }

    /// Reads an export; errors name the item and field, never a value.
    static func decode(_ text: String) throws -> [Item] {
        let document: ExportDocument
        do {
            document = try JSONDecoder().decode(ExportDocument.self, from: Data(text.utf8))
        } catch let error as DecodingError {
            throw KeychainError(.param, "not a keychain export (\(where: error))")
        } catch {
            throw KeychainError(.param, "not a keychain export")
        }
        guard document.format == formatName, document.version == 1 else {
            throw KeychainError(.param, "not a keychain export of a version this build reads")
        }
        return try document.items.enumerated().map { index, entry in
            var data: [UInt8]?
            if let text = entry.data {
                guard let decoded = Data(base64Encoded: text) else { throw KeychainError(.param, "item \(index + 1): data is not base64") }
                data = Array(decoded)
            }
            return Item(itemClass: entry.itemClass, attributes: entry.attributes, data: data)
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
        let names = path.map { key in key.intValue.map { "item \($0 + 1)" } ?? key.stringValue }
        appendLiteral(names.isEmpty ? "malformed JSON" : "at " + names.joined(separator: " / "))
    }
}

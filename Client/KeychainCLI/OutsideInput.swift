import Foundation
import KeyValueStore
import KeychainModel

/// The command line's decoders of bytes from outside, reachable without a process or a keychain:
/// what `keychain import` makes of a file and what `kv set` makes of a value. The fuzzing targets
/// drive them (decision 0267); the commands go through the same functions.
package enum OutsideInput {
    /// The `--format` names of `keychain import` that read one file (every one but `pass`).
    package static let importFormats: [String] = ImportFormat.allCases.filter { $0 != .pass }.map(\.rawValue)

    /// The items `keychain import --format FORMAT` stores from a file of `bytes`, prepared as an add
    /// prepares them (checked, defaults filled in), the sync client's own secrets left out.
    ///
    /// - Throws: ``KeychainError`` for a file this build does not read or an item it refuses.
    package static func importedItems(_ bytes: [UInt8], format name: String, now: Date) throws(KeychainError) -> [Item] {
        guard let format = ImportFormat(rawValue: name), format != .pass else { throw KeychainError(.param, "unknown format") }
        do {
            let text = try ImportFormat.text(of: Data(bytes), name: "the file")
            let items = format == .json
                ? try ExportDocument.decode(text).filter { !ItemRules.isProductSecret($0) }
                : try format.logins(text: text).flatMap { $0.items(synchronizable: false) }
            return try items.map { item throws(KeychainError) in try ItemRules.preparedForAdd(item, now: now) }
        } catch let error as KeychainError {
            throw error
        } catch {
            throw KeychainError(.param, "the file cannot be read", underlying: error)
        }
    }

    /// The bytes of `keychain export --format json` for `items`.
    package static func exportDocument(_ items: [Item]) throws -> [UInt8] {
        try ExportDocument(items).encoded()
    }

    /// The value `kv set` stores for `text` under one type flag (`int`, `double`, `bool`, `data`,
    /// `json`, or `string` for none).
    ///
    /// - Throws: The command line's own `ValidationError` for a value the type does not read.
    package static func keyValue(_ text: String, type: String) throws -> KeyValue {
        try KeyValueText.parse(
            text, int: type == "int", double: type == "double", bool: type == "bool", data: type == "data", json: type == "json")
    }
}

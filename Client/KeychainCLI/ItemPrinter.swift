import Foundation
import KeychainModel
import KeychainStore

/// How items are shown: `-w` prints the password alone, otherwise attributes as text or JSON.
enum ItemPrinter {
    static func printFound(_ query: Query, passwordOnly: Bool, in keychain: Keychain) throws {
        var search = query
        search.returns = passwordOnly ? .data : .attributes
        let result = try NotFoundHint.explaining(query, in: keychain) { try keychain.find(search)[0] }
        if passwordOnly {
            write((result.data ?? []) + [UInt8(ascii: "\n")])
        } else {
            write(Array(text(result, history: try historyLine(result, in: keychain)).utf8))
        }
    }

    /// `history: N earlier versions (…)` when conflict resolution kept versions of the item
    /// (its primary key); nil when it kept none.
    static func historyLine(_ result: ItemResult, in keychain: Keychain) throws -> String? {
        guard let attributes = result.attributes else { return nil }
        let count = try keychain.historyCount(of: PrimaryKey(itemClass: result.itemClass, attributes: attributes))
        guard count > 0 else { return nil }
        let versions = count == 1 ? "1 earlier version" : "\(count) earlier versions"
        guard result.itemClass == .genericPassword else { return "history: \(versions) (kept by conflict resolution)" }
        var command = "keychain history -a \(describe(attributes.account ?? "")) -s \(describe(attributes.service ?? ""))"
        if let group = attributes.accessGroup, group != ItemRules.defaultAccessGroup { command += " --access-group \(describe(group))" }
        return "history: \(versions) (\(command))"
    }

    static func write(_ bytes: [UInt8]) {
        StandardStream.write(bytes, to: .output)
    }

    /// The text form: the class, then one attribute per line, then `history` when given.
    static func text(_ result: ItemResult, history: String? = nil) -> String {
        var lines = ["class: \"\(result.itemClass.rawValue)\"", "attributes:"]
        for (name, value) in fields(result) where name != "class" && name != "data" {
            lines.append("    \(name): \(describe(value))")
        }
        if let history { lines.append("    \(history)") }
        if let data = result.data {
            lines.append("data:")
            lines.append(TextEscaping.quoted(String(decoding: data, as: UTF8.self)))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The JSON object of one item: `class`, `service`/`server`, `account`, `label`,
    /// `synchronizable`, `accessible`, `created`, `modified`, the other attributes present, and
    /// `data` when the result has data (`data_base64` when it is not UTF-8).
    static func jsonObject(_ result: ItemResult) -> [String: Any] {
        var object: [String: Any] = [:]
        for (name, value) in fields(result) { object[name] = value }
        return object
    }

    static func json(_ results: [ItemResult]) throws -> String {
        let data = try JSONSerialization.data(withJSONObject: results.map(jsonObject), options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    static let names: [Attribute: String] = [
        .accessGroup: "access_group", .accessible: "accessible", .synchronizable: "synchronizable", .label: "label",
        .comment: "comment", .itemDescription: "kind", .generic: "generic", .creationDate: "created",
        .modificationDate: "modified", .account: "account", .service: "service", .server: "server",
        .protocol: "protocol", .port: "port", .path: "path", .authenticationType: "authentication_type",
        .securityDomain: "security_domain", .certificateType: "certificate_type", .issuer: "issuer",
        .serialNumber: "serial_number", .subject: "subject", .keyClass: "key_class",
        .applicationLabel: "application_label", .applicationTag: "application_tag", .keyType: "key_type",
        .keySizeInBits: "key_size", .effectiveKeySize: "effective_key_size",
    ]

    private static func fields(_ result: ItemResult) -> [(String, Any)] {
        var fields: [(String, Any)] = [("class", name(of: result.itemClass))]
        let attributes = result.attributes ?? ItemAttributes()
        for attribute in attributes.present {
            let name = names[attribute] ?? attribute.rawValue
            switch attributes[attribute]! {
            case .string(let text): fields.append((name, attribute == .accessible ? accessibleName(text) : text))
            case .data(let bytes): fields.append((name, String(validating: bytes, as: UTF8.self) ?? Data(bytes).base64EncodedString()))
            case .integer(let value): fields.append((name, value))
            case .bool(let flag): fields.append((name, flag))
            case .date(let seconds): fields.append((name, timestamp(seconds)))
            }
        }
        if let data = result.data {
            if let text = String(validating: data, as: UTF8.self) {
                fields.append(("data", text))
            } else {
                fields.append(("data_base64", Data(data).base64EncodedString()))
            }
        }
        return fields.sorted { $0.0 < $1.0 }
    }

    private static func name(of itemClass: ItemClass) -> String {
        switch itemClass {
        case .genericPassword: "generic-password"
        case .internetPassword: "internet-password"
        case .certificate: "certificate"
        case .key: "key"
        }
    }

    private static func accessibleName(_ code: String) -> String {
        Accessibility(rawValue: code)?.name ?? code
    }

    private static func timestamp(_ seconds: Double) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: seconds))
    }

    /// A value as the text form shows it: a string quoted, its quotes and control characters
    /// escaped (``TextEscaping``), so that no value can break a line or reach the terminal raw.
    private static func describe(_ value: Any) -> String {
        if let text = value as? String { return TextEscaping.quoted(text) }
        return "\(value)"
    }
}

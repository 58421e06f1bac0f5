import ArgumentParser
import Foundation
import KeychainModel

/// The files `keychain import` reads. Each is read whole and checked before anything is stored;
/// an error names the line (or item, or pass entry) and never a value from the file.
enum ImportFormat: String, ExpressibleByArgument, CaseIterable {
    /// `keychain export --format json`: every attribute and secret, dates included.
    case json
    case bitwardenJSON = "bitwarden-json"
    case bitwardenCSV = "bitwarden-csv"
    case keepassxcCSV = "keepassxc-csv"
    case chromeCSV = "chrome-csv"
    case firefoxCSV = "firefox-csv"
    /// A pass store: a directory of `.gpg` files, decrypted with `gpg` as pass does.
    case pass

    /// The logins of a password manager's file (every format but `json`).
    func logins(at path: String) throws -> [ImportedLogin] {
        switch self {
        case .json: []
        case .pass: try PassStore(directory: path).logins()
        default: try logins(text: try Self.text(path))
        }
    }

    /// The logins of a file's text (the formats read from one file: all but `json` and `pass`).
    func logins(text: String) throws -> [ImportedLogin] {
        switch self {
        case .json, .pass: throw KeychainError(.param, "\(rawValue) is not read as a list of logins")
        case .bitwardenJSON: try Self.bitwardenJSON(text)
        case .bitwardenCSV, .keepassxcCSV, .chromeCSV, .firefoxCSV: try csvLogins(CSVTable(text))
        }
    }

    /// The most bytes an import file may hold: an export of a hundred thousand logins is a few
    /// tens of MiB, and a file read whole must not take the machine's memory (`/dev/zero`).
    static let maximumFileSize = 256 * 1024 * 1024

    /// The text of the file at `path`, read whole up to ``maximumFileSize`` (a FIFO too, as a
    /// shell's process substitution gives).
    static func text(_ path: String) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw KeychainError(.param, "cannot read \(path)") }
        defer { try? handle.close() }
        var data = Data()
        do {
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                data.append(chunk)
                guard data.count <= maximumFileSize else {
                    throw KeychainError(.param, "\(path) is larger than \(maximumFileSize >> 20) MiB: not a file this command imports")
                }
            }
        } catch let error as KeychainError {
            throw error
        } catch {
            throw KeychainError(.param, "cannot read \(path)", underlying: error)
        }
        return try text(of: data, name: path)
    }

    /// The file's bytes as text; `name` says which file in the error.
    static func text(of data: Data, name: String) throws(KeychainError) -> String {
        guard let text = String(data: data, encoding: .utf8) else {
            throw KeychainError(.param, "\(name) is not UTF-8 text")
        }
        return text
    }

    private func csvLogins(_ table: CSVTable) throws -> [ImportedLogin] {
        switch self {
        case .bitwardenCSV:
            // folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp
            try table.require(["type", "name", "notes", "login_uri", "login_username", "login_password"], format: rawValue)
            return table.rows.map { row in
                var login: ImportedLogin
                switch row["type"] {
                case "login", nil:
                    // Several URIs are joined with commas: the first is the login's, the rest are kept.
                    let uris = (row["login_uri"] ?? "").split(separator: ",").map(String.init)
                    login = ImportedLogin(
                        position: "line \(row.line)", title: row["name"], url: uris.first, username: row["login_username"],
                        password: row["login_password"], notes: row["notes"], totp: row["login_totp"])
                    login.otherURLs = Array(uris.dropFirst())
                case "note":
                    login = ImportedLogin(position: "line \(row.line)", title: row["name"], notes: row["notes"])
                case let type:
                    return ImportedLogin(position: "line \(row.line)", title: row["name"], skipped: Self.notKept(type.map { $0.isEmpty ? "entry of no type" : $0 } ?? "entry of no type"))
                }
                // Custom fields, a "name: value" line each.
                login.fields = (row["fields"] ?? "").split(separator: "\n").compactMap { line in
                    guard let colon = line.firstIndex(of: ":") else { return line.isEmpty ? nil : (name: "", value: String(line)) }
                    return (String(line[..<colon]), String(line[line.index(after: colon)...].drop { $0 == " " }))
                }
                login.folder = row["folder"].flatMap { $0.isEmpty ? nil : $0 }
                return login
            }
        case .keepassxcCSV:
            // "Group","Title","Username","Password","URL","Notes"[,"TOTP","Icon","Last Modified","Created"]
            try table.require(["Title", "Username", "Password", "URL", "Notes"], format: rawValue)
            return table.rows.map { row in
                var login = ImportedLogin(
                    position: "line \(row.line)", title: row["Title"], url: row["URL"], username: row["Username"],
                    password: row["Password"], notes: row["Notes"], totp: row["TOTP"])
                // "Root" is every database's top group: the folder is what lies under it.
                let group = row["Group"].map { $0 == "Root" ? "" : $0.hasPrefix("Root/") ? String($0.dropFirst(5)) : $0 } ?? ""
                login.folder = group.isEmpty ? nil : group
                return login
            }
        case .chromeCSV:
            // name,url,username,password[,note]
            try table.require(["name", "url", "username", "password"], format: rawValue)
            return table.rows.map { row in
                ImportedLogin(
                    position: "line \(row.line)", title: row["name"], url: row["url"], username: row["username"],
                    password: row["password"], notes: row["note"])
            }
        default:
            // "url","username","password","httpRealm","formActionOrigin","guid","timeCreated",…
            try table.require(["url", "username", "password"], format: rawValue)
            return table.rows.map { row in
                ImportedLogin(
                    position: "line \(row.line)", url: row["url"], username: row["username"], password: row["password"],
                    realm: row["httpRealm"])
            }
        }
    }

    /// Bitwarden's unencrypted JSON export: `items`, each of `type` 1 (login) or 2 (secure note).
    private static func bitwardenJSON(_ text: String) throws -> [ImportedLogin] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw KeychainError(.param, "not a bitwarden-json file (not a JSON object)")
        }
        if object["encrypted"] as? Bool == true {
            throw KeychainError(.param, "an encrypted Bitwarden export cannot be read: export it unencrypted")
        }
        guard let items = object["items"] as? [[String: Any]] else {
            throw KeychainError(.param, "not a bitwarden-json file (no items list)")
        }
        var folders: [String: String] = [:]
        for folder in object["folders"] as? [[String: Any]] ?? [] {
            if let id = folder["id"] as? String, let name = folder["name"] as? String { folders[id] = name }
        }
        return try items.enumerated().map { index, item in
            let position = "item \(index + 1)"
            guard let type = item["type"] as? Int else { throw KeychainError(.param, "\(position): no type") }
            let name = item["name"] as? String
            let notes = (item["notes"] as? String).flatMap { $0.isEmpty ? nil : $0 }
            var entry: ImportedLogin
            switch type {
            case 1:
                guard let login = item["login"] as? [String: Any] else { throw KeychainError(.param, "\(position): a login without login fields") }
                let uris = (login["uris"] as? [[String: Any]] ?? []).compactMap { $0["uri"] as? String }
                entry = ImportedLogin(
                    position: position, title: name, url: uris.first, username: login["username"] as? String,
                    password: login["password"] as? String, notes: notes, totp: login["totp"] as? String)
                entry.otherURLs = Array(uris.dropFirst())
            case 2:
                entry = ImportedLogin(position: position, title: name, notes: notes)
            default:
                return ImportedLogin(position: position, title: name, skipped: notKept([3: "card", 4: "identity", 5: "SSH key"][type] ?? "entry of type \(type)"))
            }
            // Custom fields: text (0), hidden (1) and boolean (2) kept; a linked field (3) only
            // names the username or password, kept already.
            entry.fields = (item["fields"] as? [[String: Any]] ?? []).compactMap { field in
                guard field["type"] as? Int != 3 else { return nil }
                let value = field["value"] as? String ?? (field["value"] as? Bool).map { $0 ? "true" : "false" } ?? ""
                return (field["name"] as? String ?? "", value)
            }
            entry.folder = (item["folderId"] as? String).flatMap { folders[$0] }
            return entry
        }
    }

    /// Why an entry of a kind keychain does not keep is skipped.
    static func notKept(_ kind: String) -> String {
        "\("aeiou".contains(kind.first ?? "x") ? "an" : "a") \(kind), not kept: keychain keeps passwords, notes, TOTP seeds and custom fields"
    }
}

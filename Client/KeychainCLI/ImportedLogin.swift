import Foundation
import KeychainModel

/// One entry read from another password manager's export, before it becomes keychain items.
struct ImportedLogin {
    /// Where the entry is in its file ("line 12", "item 3", a pass entry's path): for error
    /// messages, which never quote a value.
    var position: String
    var title: String?
    var url: String?
    var username: String?
    var password: String?
    var notes: String?
    /// A TOTP seed or `otpauth://` URI.
    var totp: String?
    /// HTTP authentication realm (Firefox), kept as the security domain.
    var realm: String?
    /// Why the entry was skipped without being read (a pass entry that is not a regular file, a
    /// card); `import` says so on standard error and counts it as skipped.
    var skipped: String?
    /// The entry's other URLs (a Bitwarden login's second and later URIs): kept in the comment.
    var otherURLs: [String] = []
    /// Custom fields (a recovery code, a PIN): kept sealed, a line each, in an item beside the login.
    var fields: [(name: String, value: String)] = []
    /// The folder (or KeePassXC group) the entry is in: kept as the label's prefix, "Folder/Title".
    var folder: String?

    /// Apple's protocol codes for the schemes a login URL has.
    static let protocols: [String: String] = [
        "https": "htps", "http": "http", "ftp": "ftp ", "ftps": "ftps", "ssh": "ssh ", "smb": "smb ", "imap": "imap",
        "imaps": "imps", "pop3": "pop3", "smtp": "smtp", "ldap": "ldap", "ldaps": "ldps", "telnet": "teln", "sftp": "ssh ",
    ]

    /// The items this entry becomes: an internet password when it has a URL with a host (server,
    /// protocol, port from the URL, and the path unless it is a web address: a site's logins are
    /// one item whichever page each manager recorded, so the same login from two managers meets
    /// as one), else a generic password (service: its title). The secret is the password, or for
    /// a note without one, the note. Notes and other URLs are kept in the item's comment; the
    /// folder prefixes the label. A TOTP seed and custom fields are secrets, so they are kept
    /// sealed in generic passwords beside the login (service `totp:` or `fields:` and the login's
    /// server or service, same account). Empty when the entry holds nothing to keep.
    func items(synchronizable: Bool) -> [Item] {
        guard password != nil || notes != nil || totp != nil || !fields.isEmpty else { return [] }
        var attributes = ItemAttributes()
        attributes.account = username ?? ""
        attributes.synchronizable = synchronizable
        let itemClass: ItemClass
        let place: String
        if let url, let components = URLComponents(string: url.contains("://") ? url : "https://" + url),
            let host = components.host, !host.isEmpty
        {
            itemClass = .internetPassword
            place = host.lowercased()
            attributes.server = place
            let scheme = components.scheme?.lowercased()
            if let scheme, let code = Self.protocols[scheme] { attributes.protocol = code }
            if let port = components.port { attributes.port = Int64(port) }
            attributes.path = scheme == "https" || scheme == "http" ? "" : components.percentEncodedPath
            attributes.securityDomain = realm ?? ""
            attributes.label = labelled(title ?? place)
        } else {
            itemClass = .genericPassword
            place = title ?? url ?? ""
            attributes.service = place
            attributes.label = title.map(labelled)
        }
        let secret = password ?? (totp == nil && fields.isEmpty ? notes : nil) ?? ""
        let comment = [password != nil || totp != nil || !fields.isEmpty ? notes : nil, otherURLs.isEmpty ? nil : "Other URLs: " + otherURLs.joined(separator: " ")]
            .compactMap { $0 }
        if !comment.isEmpty { attributes.comment = comment.joined(separator: "\n") }
        var items = [Item(itemClass: itemClass, attributes: attributes, data: Array(secret.utf8))]
        if let totp { items.append(beside(place, service: "totp:", label: "TOTP", secret: totp, synchronizable: synchronizable)) }
        if !fields.isEmpty {
            let lines = fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
            items.append(beside(place, service: "fields:", label: "custom fields", secret: lines, synchronizable: synchronizable))
        }
        return items
    }

    private func labelled(_ title: String) -> String {
        folder.map { "\($0)/\(title)" } ?? title
    }

    /// A generic password beside the login, holding one of its other secrets.
    private func beside(_ place: String, service: String, label: String, secret: String, synchronizable: Bool) -> Item {
        var attributes = ItemAttributes()
        attributes.service = service + place
        attributes.account = username ?? ""
        attributes.label = labelled(title ?? place) + " (\(label))"
        attributes.synchronizable = synchronizable
        return Item(itemClass: .genericPassword, attributes: attributes, data: Array(secret.utf8))
    }
}

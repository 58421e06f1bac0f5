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
    /// Why the entry was skipped without being read (a pass entry that is not a regular file);
    /// `import` says so on standard error and counts it as skipped.
    var skipped: String?

    /// Apple's protocol codes for the schemes a login URL has.
    static let protocols: [String: String] = [
        "https": "htps", "http": "http", "ftp": "ftp ", "ftps": "ftps", "ssh": "ssh ", "smb": "smb ", "imap": "imap",
        "imaps": "imps", "pop3": "pop3", "smtp": "smtp", "ldap": "ldap", "ldaps": "ldps", "telnet": "teln", "sftp": "ssh ",
    ]

    /// The items this entry becomes: an internet password when it has a URL with a host (server,
    /// protocol, port and path from the URL), else a generic password (service: its title). The
    /// secret is the password, or for a note without one, the note. Notes are kept as the item's
    /// comment. A TOTP seed is a secret, so it is kept sealed: in a generic password beside the
    /// login (service `totp:` and the login's server or service, same account). Empty when the
    /// entry holds nothing to keep.
    func items(synchronizable: Bool) -> [Item] {
        guard password != nil || notes != nil || totp != nil else { return [] }
        var attributes = ItemAttributes()
        attributes.account = username ?? ""
        attributes.synchronizable = synchronizable
        let itemClass: ItemClass
        let place: String
        if let url, let components = URLComponents(string: url.contains("://") ? url : "https://" + url),
            let host = components.host, !host.isEmpty
        {
            itemClass = .internetPassword
            place = host
            attributes.server = host
            if let scheme = components.scheme?.lowercased(), let code = Self.protocols[scheme] { attributes.protocol = code }
            if let port = components.port { attributes.port = Int64(port) }
            attributes.path = components.percentEncodedPath
            attributes.securityDomain = realm ?? ""
            attributes.label = title ?? host
        } else {
            itemClass = .genericPassword
            place = title ?? url ?? ""
            attributes.service = place
            attributes.label = title
        }
        let secret = password ?? (totp == nil ? notes : nil) ?? ""
        if password != nil || totp != nil { attributes.comment = notes }
        var items = [Item(itemClass: itemClass, attributes: attributes, data: Array(secret.utf8))]
        if let totp {
            var seed = ItemAttributes()
            seed.service = "totp:" + place
            seed.account = username ?? ""
            seed.label = (title ?? place) + " (TOTP)"
            seed.synchronizable = synchronizable
            items.append(Item(itemClass: .genericPassword, attributes: seed, data: Array(totp.utf8)))
        }
        return items
    }
}

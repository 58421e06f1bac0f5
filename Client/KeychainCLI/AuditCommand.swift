import ArgumentParser
import Crypto
import Foundation
import KeychainModel
import KeychainStore

/// `keychain audit [--older-than DAYS]`: the passwords worth changing, found on this device with
/// nothing sent anywhere (decision 0274): one password shared by several items, a weak one (the
/// strength estimate new account passwords are held to), and one not changed for a long time.
/// Items are named by label, place and account; a password is never printed, nor any part of it.
struct Audit: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit", abstract: "List reused, weak and old passwords (checked here; nothing is sent anywhere).")

    @OptionGroup var keychain: KeychainOptions
    @Option(name: .customLong("older-than"), help: "Call a password old when it has not changed for this many days (default 365).")
    var olderThan = 365

    func validate() throws {
        guard (1...36_500).contains(olderThan) else { throw ValidationError("--older-than must be 1 to 36500 days") }
    }

    func run() throws {
        let items = try Self.passwords(in: try keychain.openExisting())
        let now = Date()
        var lines: [String] = []
        // Reuse: grouped by a keyed digest of the password (the key lives for this run only).
        let key = SymmetricKey(size: .bits256)
        let groups = Dictionary(grouping: items) { Data(HMAC<SHA256>.authenticationCode(for: $0.password, using: key)) }
            .values.filter { $0.count > 1 }.sorted { $0[0].name < $1[0].name }
        for group in groups {
            lines.append("reused: \(group.count) items share one password: \(group.map(\.name).sorted().joined(separator: ", "))")
        }
        var weak = 0, old = 0
        for item in items.sorted(by: { $0.name < $1.name }) {
            let strength = PasswordStrength(String(decoding: item.password, as: UTF8.self))
            if let weakness = Self.weakness(strength) {
                weak += 1
                lines.append("weak: \(item.name): \(weakness)")
            }
            if let changed = item.changed, now.timeIntervalSince(changed) > Double(olderThan) * 86_400 {
                old += 1
                let days = Int(now.timeIntervalSince(changed) / 86_400)
                lines.append("old: \(item.name): last changed \(days) days ago (\(ExportTimestamp.format(changed.timeIntervalSince1970).prefix(10)))")
            }
        }
        lines.append("\(items.count) passwords checked: \(groups.reduce(0) { $0 + $1.count }) reused, \(weak) weak, \(old) older than \(olderThan) days")
        ItemPrinter.write(Array(lines.map { TextEscaping.escape($0, .message) + "\n" }.joined().utf8))
    }

    /// Why a password is weak, without any part of it (a common word it is made of is not named);
    /// nil when it is not.
    static func weakness(_ strength: PasswordStrength) -> String? {
        switch strength.weakness {
        case nil: nil
        case .tooShort: "shorter than \(PasswordStrength.minimumLength) characters"
        case .common: "a common password, or one with a few characters changed"
        case .accountName, .easyToGuess: "easy to guess (an estimated \(Int(strength.bits.rounded())) bits)"
        }
    }

    struct Password {
        var name: String
        var password: [UInt8]
        var changed: Date?
    }

    /// The user's passwords: generic and internet passwords with a secret, not the sync client's own
    /// items nor the seeds and fields import keeps beside a login.
    static func passwords(in keychain: Keychain) throws -> [Password] {
        var found: [Password] = []
        for itemClass in [ItemClass.genericPassword, .internetPassword] {
            var results: [ItemResult] = []
            do {
                results = try keychain.find(Query(itemClass: itemClass, synchronizable: .any, limit: .all, returns: [.attributes, .data]))
            } catch {
                guard error.code == .itemNotFound else { throw error }
            }
            for result in results {
                guard let attributes = result.attributes, let data = result.data, !data.isEmpty,
                    !ItemRules.isProductSecret(Item(itemClass: itemClass, attributes: attributes, data: data))
                else { continue }
                let service = attributes.service ?? ""
                if service.hasPrefix("totp:") || service.hasPrefix("fields:") { continue }
                let place = itemClass == .internetPassword ? attributes.server ?? "" : service
                let account = attributes.account.map { $0.isEmpty ? "" : " (\($0))" } ?? ""
                let label = attributes.label.flatMap { $0.isEmpty || $0 == place ? nil : "\($0): " } ?? ""
                found.append(Password(name: label + place + account, password: data, changed: attributes.modificationDate))
            }
        }
        return found
    }
}

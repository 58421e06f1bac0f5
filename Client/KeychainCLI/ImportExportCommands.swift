import ArgumentParser
import Foundation
import KeychainModel
import KeychainStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `keychain import`: another password manager's export (or this keychain's own) read whole,
/// then stored in one transaction: all or nothing. Prints `imported N, updated N, unchanged N, skipped N`,
/// and names on standard error each entry skipped and why (decision 0273).
struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Import passwords from a file (or a pass store) in one transaction.")

    @OptionGroup var keychain: KeychainOptions
    @Option(name: .customLong("format"), help: "json (keychain export), bitwarden-json, bitwarden-csv, keepassxc-csv, chrome-csv, firefox-csv or pass.")
    var format: ImportFormat
    @Argument(help: "The file, or the pass store's directory.") var source: String
    @Flag(name: .customLong("sync"), help: "Make the imported items synchronizable (json keeps each item's own flag).") var sync = false
    @Flag(name: .customLong("dry-run"), help: "Read and count only; store nothing.") var dryRun = false

    func run() throws {
        let items: [Item]
        var skipped = 0
        if format == .json {
            // Another device's own sync secrets (in an export made before they were left out)
            // would break this device's sync: never imported.
            let decoded = try ExportDocument.decode(try ImportFormat.text(source))
            items = decoded.filter { !ItemRules.isProductSecret($0) }
            skipped = decoded.count - items.count
            if skipped > 0 {
                StandardStream.write(
                    Array("keychain: skipped \(skipped) item(s) of the sync client's own secrets (another device's keys and token); they are never imported\n".utf8),
                    to: .error)
            }
        } else {
            var kept: [Item] = []
            // Where each item came from: two entries that are one item (same site and account) are
            // said, the later one kept.
            var positions: [PrimaryKey: String] = [:]
            for login in try format.logins(at: source) {
                let items = login.items(synchronizable: sync)
                guard !items.isEmpty else {
                    skipped += 1
                    Self.say("skipped \(login.position): \(login.skipped ?? "nothing to keep (no password, note, TOTP seed or custom field)")")
                    continue
                }
                for item in items {
                    if let earlier = positions.updateValue(login.position, forKey: item.primaryKey) {
                        Self.say("\(login.position) is the same item as \(earlier) (same site or service and account): the later one is kept")
                    }
                }
                kept += items
            }
            items = kept
        }
        let counts = try keychain.open().importItems(items, keepingDates: format == .json, dryRun: dryRun)
        let verb = dryRun ? "would import" : "imported"
        ItemPrinter.write(Array("\(verb) \(counts.imported), updated \(counts.updated), unchanged \(counts.unchanged), skipped \(skipped)\n".utf8))
    }

    private static func say(_ message: String) {
        StandardStream.write(Array("keychain: \(ExitStatus.oneLine(message))\n".utf8), to: .error)
    }
}

/// `keychain export --format json`: every item with its secret and attributes, importable back
/// with `import --format json` without loss. On a terminal it asks first.
struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Write every item, secrets included, as JSON to standard output.")

    enum Format: String, ExpressibleByArgument { case json }

    @OptionGroup var keychain: KeychainOptions
    @Option(name: .customLong("format"), help: "json (the only format).") var format: Format = .json
    @Option(name: .customLong("sync"), help: "Which items: synchronizable (yes), local (no) or both (any, the default).")
    var sync: SyncFilter = .any
    @Flag(
        name: .customLong("include-this-device-only"),
        help: "Also write the items marked to never leave this device (ThisDeviceOnly); the sync client's own keys are never written.")
    var includeThisDeviceOnly = false

    func run() throws {
        // The Secret Service's items are the user's (stored with secret-tool or an application):
        // exported. The sync client's own secrets never are (decision 0260).
        let items = try keychain.openExisting().exportItems(synchronizable: sync.match, includingThisDeviceOnly: includeThisDeviceOnly)
        if includeThisDeviceOnly {
            StandardStream.write(
                Array("keychain: the export includes items marked to never leave this device; keep the file as safe as they are\n".utf8),
                to: .error)
        }
        if isatty(STDOUT_FILENO) == 1 {
            try Confirmation.require("write \(items.count) items with their passwords to the terminal?", cancelled: "export cancelled")
        }
        ItemPrinter.write(try ExportDocument(items).encoded())
    }
}

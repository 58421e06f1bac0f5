import ArgumentParser
import Foundation
import KeychainModel
import KeychainStore

/// `keychain history`: the versions of a generic password kept by conflict resolution, oldest
/// first, under a header row: `VERSION<TAB>RECORDED<TAB>MODIFIED<TAB>SYNC<TAB>LABEL`, with `-w`
/// also `<TAB>PASSWORD`; every column is filled (`-` for a version without a label). Or, with
/// `--restore NUMBER`, that version made current again as a new local write, which syncs, and a
/// line saying what was restored. `--sync yes|no|any` picks the synchronizable item, the local
/// one, or both (the default).
struct History: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history", abstract: "List the versions of a generic password kept by conflict resolution, or restore one.")

    @OptionGroup var keychain: KeychainOptions
    @Option(name: .customShort("a"), parsing: .unconditional, help: "Account.", transform: ArgumentEscaping.unescape) var account: String
    @Option(name: .customShort("s"), parsing: .unconditional, help: "Service.", transform: ArgumentEscaping.unescape) var service: String
    @Option(name: .customLong("access-group"), parsing: .unconditional, help: "Access group.", transform: ArgumentEscaping.unescape) var accessGroup: String?
    @Option(name: .customLong("sync"), help: "Whose history: the synchronizable item (yes), the local one (no) or both (any, the default).")
    var sync: SyncFilter = .any
    @Flag(name: .customShort("w"), help: "Also print each version's password.") var passwords = false
    @Option(name: .customLong("restore"), help: "Make the version with this number current again (a new local write, which syncs).")
    var restore: Int64?

    func run() throws {
        let keychain = try keychain.openExisting()
        var attributes = ItemAttributes()
        attributes.account = account
        attributes.service = service
        attributes.accessGroup = accessGroup ?? ItemRules.defaultAccessGroup
        let primaryKeys = sync.flags.map { flag in
            attributes.synchronizable = flag
            return PrimaryKey(itemClass: .genericPassword, attributes: attributes)
        }
        if let restore {
            var found: HistoryVersion?
            for key in primaryKeys where found == nil {
                found = try keychain.historyVersions(of: key).first { $0.id == restore }
            }
            guard let version = found else { throw KeychainError(.itemNotFound, "no such version") }
            let displaced = try keychain.restoreHistoryVersion(restore)
            ItemPrinter.write(Array(Self.restoredLine(version, replaced: displaced).utf8))
            return
        }
        // Version numbers grow with time across both items, so sorting by them is oldest first.
        let versions = try primaryKeys.flatMap { key in try keychain.historyVersions(of: key, includingData: passwords) }
            .sorted { $0.id < $1.id }
        if versions.isEmpty { throw KeychainError(.itemNotFound, "no history for this item") }
        var output = Array((Self.header + (passwords ? ["PASSWORD"] : [])).joined(separator: "\t").utf8) + [UInt8(ascii: "\n")]
        for version in versions {
            output += Array(Self.columns(version).joined(separator: "\t").utf8)
            // A column like the others: a tab or newline in a password cannot break the row.
            if passwords { output += Array(("\t" + TextEscaping.escape(String(decoding: version.item.data ?? [], as: UTF8.self), .cell)).utf8) }
            output.append(UInt8(ascii: "\n"))
        }
        ItemPrinter.write(output)
    }

    static let header = ["VERSION", "RECORDED", "MODIFIED", "SYNC", "LABEL"]

    /// One version's columns, every one filled: its number, when conflict resolution kept it, when
    /// it was written, whether it is the synchronizable item's, and its label (`-` for none).
    static func columns(_ version: HistoryVersion) -> [String] {
        let attributes = version.item.attributes
        return [
            "\(version.id)", version.recorded.formatted(.iso8601), attributes.modificationDate?.formatted(.iso8601) ?? "-",
            attributes.synchronizable == true ? "yes" : "no", attributes.label.map { $0.isEmpty ? "-" : TextEscaping.escape($0, .cell) } ?? "-",
        ]
    }

    /// What `--restore` did, in one line.
    static func restoredLine(_ version: HistoryVersion, replaced: Int64?) -> String {
        let attributes = version.item.attributes
        let kind = attributes.synchronizable == true ? "synchronizable" : "local"
        var line = "restored version \(version.id) (recorded \(version.recorded.formatted(.iso8601))"
        if let label = attributes.label, !label.isEmpty { line += ", label \(TextEscaping.quoted(label))" }
        line += ") as the current \(kind) item, account \(TextEscaping.quoted(attributes.account ?? "")), service \(TextEscaping.quoted(attributes.service ?? ""))"
        line += replaced.map { "; the item it replaced is kept as version \($0)" } ?? "; there was no current item"
        return line + "\n"
    }
}

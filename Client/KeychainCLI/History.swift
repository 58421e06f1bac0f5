import ArgumentParser
import Foundation
import KeychainModel
import KeychainStore

/// `keychain history`: the versions of a generic password kept by conflict resolution, one per
/// line (`NUMBER<TAB>RECORDED<TAB>LABEL`, with `-w` also `<TAB>PASSWORD`), oldest first; or, with
/// `--restore NUMBER`, that version made current again as a new local write, which syncs.
/// `--sync yes|no|any` picks the synchronizable item, the local one, or both (the default).
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
            let known = try primaryKeys.contains { key in try keychain.historyVersions(of: key).contains { $0.id == restore } }
            guard known else { throw KeychainError(.itemNotFound, "no such version") }
            try keychain.restoreHistoryVersion(restore)
            return
        }
        // Version numbers grow with time across both items, so sorting by them is oldest first.
        let versions = try primaryKeys.flatMap { key in try keychain.historyVersions(of: key, includingData: passwords) }
            .sorted { $0.id < $1.id }
        if versions.isEmpty { throw KeychainError(.itemNotFound, "no history for this item") }
        var output: [UInt8] = []
        for version in versions {
            let recorded = version.recorded.formatted(.iso8601)
            output += Array("\(version.id)\t\(recorded)\t\(version.item.attributes.label ?? "")".utf8)
            if passwords { output += [UInt8(ascii: "\t")] + (version.item.data ?? []) }
            output.append(UInt8(ascii: "\n"))
        }
        ItemPrinter.write(output)
    }
}

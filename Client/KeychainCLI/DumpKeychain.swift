import ArgumentParser
import KeychainModel
import KeychainStore

struct DumpKeychain: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "dump-keychain", abstract: "List every item.")

    @OptionGroup var keychain: KeychainOptions
    @Flag(name: .customShort("d"), help: "Include the secrets.") var includeData = false
    @Flag(name: .customLong("json"), help: "Print a JSON array.") var json = false

    func run() throws {
        let keychain = try keychain.open()
        var results: [ItemResult] = []
        for itemClass in ItemClass.allCases {
            let query = Query(
                itemClass: itemClass, synchronizable: .any, limit: .all,
                returns: includeData ? [.attributes, .data] : .attributes)
            do {
                results += try keychain.find(query)
            } catch {
                guard error.code == .itemNotFound else { throw error }
            }
        }
        if json {
            ItemPrinter.write(Array(try ItemPrinter.json(results).utf8))
        } else {
            ItemPrinter.write(Array(results.map(ItemPrinter.text).joined().utf8))
        }
    }
}

struct History: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history", abstract: "List the versions of a generic password kept by conflict resolution, or restore one.")

    @OptionGroup var keychain: KeychainOptions
    @Option(name: .customShort("a"), parsing: .unconditional, help: "Account.", transform: ArgumentEscaping.unescape) var account: String
    @Option(name: .customShort("s"), parsing: .unconditional, help: "Service.", transform: ArgumentEscaping.unescape) var service: String
    @Option(name: .customLong("access-group"), parsing: .unconditional, help: "Access group.", transform: ArgumentEscaping.unescape) var accessGroup: String?
    @Flag(name: .customLong("sync"), help: "The synchronizable item (the default is the local one).") var sync = false
    @Option(name: .customLong("restore"), help: "Make this version current again.") var restore: Int64?

    func run() throws {
        let keychain = try keychain.open()
        var attributes = ItemAttributes()
        attributes.account = account
        attributes.service = service
        attributes.accessGroup = accessGroup ?? ItemRules.defaultAccessGroup
        attributes.synchronizable = sync
        let primaryKey = PrimaryKey(itemClass: .genericPassword, attributes: attributes)
        let versions = try keychain.historyVersions(of: primaryKey)
        if let restore {
            guard versions.contains(where: { $0.id == restore }) else { throw KeychainError(.itemNotFound, "no such version") }
            try keychain.restoreHistoryVersion(restore)
            return
        }
        if versions.isEmpty { throw KeychainError(.itemNotFound, "no history for this item") }
        let lines = versions.map { version in
            "\(version.id)\t\(version.recorded.timeIntervalSince1970)\t\(version.item.attributes.label ?? "")"
        }
        ItemPrinter.write(Array((lines.joined(separator: "\n") + "\n").utf8))
    }
}

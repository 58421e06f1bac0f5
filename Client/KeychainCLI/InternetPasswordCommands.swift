import ArgumentParser
import KeychainModel
import KeychainStore

/// The key attributes of internet passwords other than account and server.
struct InternetKeyOptions: ParsableArguments {
    @Option(name: .customShort("r"), parsing: .unconditional, help: "Protocol (Apple's four-letter code, e.g. htps).", transform: ArgumentEscaping.unescape)
    var `protocol`: String?
    @Option(name: .customShort("P"), help: "Port.") var port: Int?
    @Option(name: .customShort("p"), parsing: .unconditional, help: "Path.", transform: ArgumentEscaping.unescape) var path: String?
    @Option(name: .customShort("d"), parsing: .unconditional, help: "Security domain.", transform: ArgumentEscaping.unescape) var securityDomain: String?
    @Option(name: .customShort("t"), parsing: .unconditional, help: "Authentication type (Apple's four-letter code).", transform: ArgumentEscaping.unescape) var authenticationType: String?

    func attributes(account: String?, server: String?) -> ItemAttributes {
        var attributes = ItemAttributes()
        attributes.account = account
        attributes.server = server
        attributes.protocol = self.protocol
        attributes.port = port.map(Int64.init)
        attributes.path = path
        attributes.securityDomain = securityDomain
        attributes.authenticationType = authenticationType
        return attributes
    }
}

struct AddInternetPassword: PasswordTakingCommand {
    static let configuration = CommandConfiguration(commandName: "add-internet-password", abstract: "Add an internet password.")

    @OptionGroup var keychain: KeychainOptions
    @Option(name: .customShort("a"), parsing: .unconditional, help: "Account.", transform: ArgumentEscaping.unescape) var account: String
    @Option(name: .customShort("s"), parsing: .unconditional, help: "Server.", transform: ArgumentEscaping.unescape) var server: String
    @OptionGroup var key: InternetKeyOptions
    @OptionGroup var options: AddOptions

    func run() throws {
        try options.add(.internetPassword, keyAttributes: key.attributes(account: account, server: server), to: keychain.open())
    }
}

/// The filters of the internet-password search verbs.
struct InternetPasswordFilters: ParsableArguments {
    @Option(name: .customShort("a"), parsing: .unconditional, help: "Account.", transform: ArgumentEscaping.unescape) var account: String?
    @Option(name: .customShort("s"), parsing: .unconditional, help: "Server.", transform: ArgumentEscaping.unescape) var server: String?
    @OptionGroup var key: InternetKeyOptions
    @OptionGroup var search: SearchOptions

    func query(limit: MatchLimit = .one) -> Query {
        search.query(.internetPassword, key.attributes(account: account, server: server), limit: limit)
    }

    /// Whether a filter narrows the search to particular items.
    var narrows: Bool { !key.attributes(account: account, server: server).present.isEmpty || search.narrows }
}

struct FindInternetPassword: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "find-internet-password", abstract: "Find an internet password.")

    @OptionGroup var keychain: KeychainOptions
    @OptionGroup var filters: InternetPasswordFilters
    @Flag(name: .customShort("w"), help: "Print only the password.") var passwordOnly = false

    func run() throws {
        try ItemPrinter.printFound(filters.query(), passwordOnly: passwordOnly, in: keychain.openExisting())
    }
}

struct DeleteInternetPassword: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete-internet-password",
        abstract: "Delete the matching internet password; with --all, every match (asked first on a terminal).")

    @OptionGroup var keychain: KeychainOptions
    @OptionGroup var filters: InternetPasswordFilters
    @Flag(name: .customLong("all"), help: "Delete every match (on a terminal, asks first).") var all = false

    func run() throws {
        let request = DeleteRequest(
            query: filters.query(limit: .all), narrowed: filters.narrows, all: all, filterNames: "-a, -s, -r, -P, -p, -l")
        try request.run(keychain.openExisting())
    }
}

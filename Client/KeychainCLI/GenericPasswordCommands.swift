import ArgumentParser
import KeychainModel
import KeychainStore

struct AddGenericPassword: PasswordTakingCommand {
    static let configuration = CommandConfiguration(commandName: "add-generic-password", abstract: "Add a generic password.")

    @OptionGroup var keychain: KeychainOptions
    @Option(name: .customShort("a"), parsing: .unconditional, help: "Account.", transform: ArgumentEscaping.unescape) var account: String
    @Option(name: .customShort("s"), parsing: .unconditional, help: "Service.", transform: ArgumentEscaping.unescape) var service: String
    @OptionGroup var options: AddOptions

    func run() throws {
        var key = ItemAttributes()
        key.account = account
        key.service = service
        try options.add(.genericPassword, keyAttributes: key, to: keychain.open())
    }
}

/// The filters of the generic-password search verbs.
struct GenericPasswordFilters: ParsableArguments {
    @Option(name: .customShort("a"), parsing: .unconditional, help: "Account.", transform: ArgumentEscaping.unescape) var account: String?
    @Option(name: .customShort("s"), parsing: .unconditional, help: "Service.", transform: ArgumentEscaping.unescape) var service: String?
    @OptionGroup var search: SearchOptions

    func query(limit: MatchLimit = .one, returns: ReturnTypes = []) -> Query {
        var filters = ItemAttributes()
        filters.account = account
        filters.service = service
        return search.query(.genericPassword, filters, limit: limit, returns: returns)
    }

    /// Whether a filter narrows the search to particular items.
    var narrows: Bool { account != nil || service != nil || search.narrows }
}

struct FindGenericPassword: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "find-generic-password", abstract: "Find a generic password.")

    @OptionGroup var keychain: KeychainOptions
    @OptionGroup var filters: GenericPasswordFilters
    @Flag(name: .customShort("w"), help: "Print only the password.") var passwordOnly = false

    func run() throws {
        try ItemPrinter.printFound(filters.query(), passwordOnly: passwordOnly, in: keychain.openExisting())
    }
}

struct DeleteGenericPassword: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete-generic-password",
        abstract: "Delete the matching generic password; with --all, every match (asked first on a terminal).")

    @OptionGroup var keychain: KeychainOptions
    @OptionGroup var filters: GenericPasswordFilters
    @Flag(name: .customLong("all"), help: "Delete every match (on a terminal, asks first).") var all = false

    func run() throws {
        let request = DeleteRequest(query: filters.query(limit: .all), narrowed: filters.narrows, all: all, filterNames: "-a, -s, -l")
        try request.run(keychain.openExisting())
    }
}

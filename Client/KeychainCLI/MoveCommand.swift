import ArgumentParser
import KeychainModel
import KeychainStore

/// `keychain move (-s SERVICE | -r SERVER) [-a ACCOUNT] [--from GROUP] (--group NAME | --private)`:
/// one password moved from the account's keychain (or the group `--from`) into a shared group's
/// keychain, or back into the account's own (decision 0295). The copy is added first and the
/// original deleted after, each in its own transaction: a move cut short leaves the item in both
/// places, never in neither. The moved item is synchronizable wherever it lands.
struct MoveItem: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "move", abstract: "Move a password into a shared group's keychain, or back into the account's own.")

    @Option(name: .customLong("keychain"), parsing: .unconditional, help: "Keychain database (default: $KEYCHAIN_PATH, else the per-user data directory).", transform: ArgumentEscaping.unescape)
    var path: String?
    @Option(name: .customShort("s"), parsing: .unconditional, help: "Service (a generic password).", transform: ArgumentEscaping.unescape) var service: String?
    @Option(name: .customShort("r"), parsing: .unconditional, help: "Server (an internet password).", transform: ArgumentEscaping.unescape) var server: String?
    @Option(name: .customShort("a"), parsing: .unconditional, help: "Account.", transform: ArgumentEscaping.unescape) var account: String?
    @Option(name: .customLong("from"), parsing: .unconditional, help: "The shared group the item is in (default: the account's own keychain).", transform: ArgumentEscaping.unescape)
    var from: String?
    @Option(name: .customLong("group"), parsing: .unconditional, help: "The shared group to move it into.", transform: ArgumentEscaping.unescape)
    var group: String?
    @Flag(name: .customLong("private"), help: "Move it out of the group --from into the account's own keychain.") var toPrivate = false

    func validate() throws {
        guard (service == nil) != (server == nil) else { throw ValidationError("name the item by -s SERVICE or by -r SERVER") }
        guard (group == nil) == toPrivate else { throw ValidationError("say where to: --group NAME or --private") }
        guard !toPrivate || from != nil else { throw ValidationError("--private moves an item out of a group: name it with --from GROUP") }
        guard group == nil || group != from else { throw ValidationError("the item is in that group already") }
    }

    func run() throws {
        let source = try KeychainOptions.open(path, group: from, creating: false)
        // The original is deleted last: a group this account only reads is refused before the copy.
        try source.refuseIfReadOnly()
        var filters = ItemAttributes()
        filters.service = service
        filters.server = server
        filters.account = account
        let itemClass: ItemClass = server == nil ? .genericPassword : .internetPassword
        let query = SearchRequest(sync: .any).query(itemClass, filters, limit: .count(2), returns: [.attributes, .data, .persistentReference])
        let found = try source.find(query)
        guard found.count == 1, let attributes = found[0].attributes, let reference = found[0].persistentReference else {
            throw KeychainError(.param, "more than one item matches; name the one to move with -a ACCOUNT (and -s or -r)")
        }
        var moved = Item(itemClass: itemClass, attributes: attributes, data: found[0].data)
        moved.attributes.synchronizable = true
        moved.attributes.creationDate = nil
        moved.attributes.modificationDate = nil
        let destination = try KeychainOptions.open(path, group: group, creating: true)
        let place = group.map { "the group " + $0 } ?? "the account's keychain"
        do {
            try destination.add(moved)
        } catch {
            guard error.code == .duplicateItem else { throw error }
            throw KeychainError(.duplicateItem, place + " already has an item with this primary key; nothing moved")
        }
        var exact = query
        exact.limit = .all
        try source.delete(exact, references: [reference])
        print("moved to " + place)
    }
}

import ArgumentParser
import KeychainModel
import KeychainStore

struct DumpKeychain: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "dump-keychain", abstract: "List every item.")

    @OptionGroup var keychain: KeychainOptions
    @Flag(name: .customShort("d"), help: "Include the secrets.") var includeData = false
    @Flag(name: .customLong("json"), help: "Print a JSON array.") var json = false

    func run() throws {
        let keychain = try keychain.openExisting()
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
            ItemPrinter.write(Array(results.map { ItemPrinter.text($0) }.joined().utf8))
        }
    }
}

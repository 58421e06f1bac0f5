import ArgumentParser
import DurableSQLite
import Foundation
import KeyValueStore
import KeychainModel
import KeychainStore

/// `keychain kv --store NAME set KEY VALUE | get KEY | remove KEY | list [--json]`: the key-value
/// stores kept beside the keychain (docs/decisions/0060).
struct KeyValueCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kv", abstract: "Read and write a key-value store (iCloud key-value store semantics).",
        subcommands: [Set.self, Get.self, Remove.self, List.self])

    @Option(name: .customLong("store"), help: "The store's name (an app's identifier).") var store: String

    /// `--keychain PATH` of a kv verb: the store lives beside that keychain.
    struct StoreOptions: ParsableArguments {
        @OptionGroup var keychain: KeychainOptions
        @ParentCommand var kv: KeyValueCommand

        func open() throws -> KeyValueStore {
            // Not beside a keychain path that is something other than a regular file
            // (`/dev/null` would put the database in `/dev`).
            let keychainPath = keychain.path ?? KeychainLocation.defaultPath()
            if let refusal = FileKind(atPath: keychainPath).refusal("the keychain path", keychainPath) {
                throw KeychainError(.notAvailable, refusal)
            }
            return try mapped { try KeyValueDatabase.open(besideKeychainAt: keychainPath).store(named: kv.store) }
        }
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set a value: a string by default, or --int, --double, --bool (true/false), --data (base64), --json (any JSON but null).",
            discussion: "A value that begins with - is taken as it is. For a key or value that is -- or an option name, put -- before the key (after every option).")

        @OptionGroup var options: StoreOptions
        @Flag(name: .customLong("int"), help: "The value is a 64-bit integer.") var int = false
        @Flag(name: .customLong("double"), help: "The value is a double.") var double = false
        @Flag(name: .customLong("bool"), help: "The value is true or false.") var bool = false
        @Flag(name: .customLong("data"), help: "The value is base64-encoded data.") var data = false
        @Flag(name: .customLong("json"), help: "The value is JSON: an array, object, string, number or boolean.") var json = false
        @Argument(help: "The key (1 to 64 bytes of UTF-8).", transform: ArgumentEscaping.unescape) var key: String
        @Argument(parsing: .allUnrecognized, help: "The value.") var value: [String] = []

        func run() throws {
            guard value.count == 1 else { throw ValidationError("give exactly one value") }
            let typed = try KeyValueText.parse(ArgumentEscaping.unescape(value[0]), int: int, double: double, bool: bool, data: data, json: json)
            let store = try options.open()
            try mapped { try store.set(typed, forKey: key) }
        }
    }

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a key's value (exit 44 when it has none).")

        @OptionGroup var options: StoreOptions
        @Flag(name: .customLong("json"), help: "Print the value in its typed JSON form, e.g. {\"int\":5}.") var json = false
        @Argument(help: "The key.", transform: ArgumentEscaping.unescape) var key: String

        func run() throws {
            let store = try options.open()
            guard let value = try mapped({ try store.value(forKey: key) }) else {
                throw KeychainError(.itemNotFound, "the store has no value for this key")
            }
            ItemPrinter.write(Array(((json ? try KeyValueText.typedJSON(value) : KeyValueText.display(value)) + "\n").utf8))
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a key's value (exit 44 when it has none).")

        @OptionGroup var options: StoreOptions
        @Argument(help: "The key.", transform: ArgumentEscaping.unescape) var key: String

        func run() throws {
            let store = try options.open()
            guard try mapped({ try store.removeValue(forKey: key) }) else {
                throw KeychainError(.itemNotFound, "the store has no value for this key")
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List every key: KEY<tab>TYPE<tab>VALUE lines, or a JSON object.")

        @OptionGroup var options: StoreOptions
        @Flag(name: .customLong("json"), help: "Print one JSON object of typed values, e.g. {\"count\":{\"int\":5}}.") var json = false

        func run() throws {
            let store = try options.open()
            let values = try mapped { try store.dictionaryRepresentation() }
            if json {
                ItemPrinter.write(Array((try KeyValueText.typedJSON(values) + "\n").utf8))
                return
            }
            let lines = values.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { key, value in
                "\(key)\t\(value.typeName)\t\(KeyValueText.display(value))\n"
            }
            ItemPrinter.write(Array(lines.joined().utf8))
        }
    }
}

/// Runs `body`, turning a store error into the CLI's error: a missing key is "item not found"
/// (exit 44), anything else a one-line message with the generic exit code.
private func mapped<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let error as KeyValueStoreError {
        throw KeychainError(error.code == .keyNotFound ? .itemNotFound : .param, error.message)
    }
}

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
    /// `keychain --keychain PATH kv …` arrives here (``KeychainOptions/movedAfterVerb(_:)``).
    @Option(name: .customLong("keychain"), parsing: .unconditional, help: "Keychain database (default: $KEYCHAIN_PATH, else the per-user data directory).", transform: ArgumentEscaping.unescape)
    var keychainPath: String?

    /// `--keychain PATH` of a kv verb: the store lives beside that keychain.
    ///
    /// `set` creates the store's database; `get`, `list` and `remove` create nothing: with no
    /// database yet beside an existing keychain the store is empty, and with no keychain there
    /// either the path is refused, as every reading verb refuses it (a mistyped path).
    struct StoreOptions: ParsableArguments {
        @OptionGroup var keychain: KeychainOptions
        @ParentCommand var kv: KeyValueCommand

        /// The keychain's path: the verb's `--keychain`, else the one given before `kv`'s own
        /// options, else the default.
        var keychainPath: String { keychain.path ?? kv.keychainPath ?? KeychainLocation.defaultPath() }

        /// The store, its database created when missing.
        func open() throws -> KeyValueStore {
            let database = try checkedDatabasePath()
            return try mapped { try KeyValueDatabase(path: database).store(named: kv.store) }
        }

        /// The store when its database exists; nil for an existing keychain without one.
        /// - Throws: When neither the database nor the keychain exists.
        func openExisting() throws -> KeyValueStore? {
            let database = try checkedDatabasePath()
            guard FileKind(atPath: database) != .missing else {
                guard FileKind(atPath: keychainPath) != .missing else {
                    throw KeychainError(.notAvailable, "there is no keychain at \(keychainPath)")
                }
                try mapped { try KeyValueLimits.validate(storeName: kv.store) }
                return nil
            }
            return try mapped { try KeyValueDatabase(path: database).store(named: kv.store) }
        }

        /// The database's path beside the keychain, once the keychain's path is known not to be
        /// something other than a regular file (`/dev/null` would put the database in `/dev`).
        private func checkedDatabasePath() throws -> String {
            let keychainPath = keychainPath
            if let refusal = FileKind(atPath: keychainPath).refusal("the keychain path", keychainPath) {
                throw KeychainError(.notAvailable, refusal)
            }
            return KeyValueDatabase.path(besideKeychainAt: keychainPath)
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
            let store = try options.openExisting()
            guard let value = try mapped({ try store?.value(forKey: key) }) else {
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
            guard let store = try options.openExisting(), try mapped({ try store.removeValue(forKey: key) }) else {
                throw KeychainError(.itemNotFound, "the store has no value for this key")
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List every key: KEY<tab>TYPE<tab>VALUE lines, or a JSON object.")

        @OptionGroup var options: StoreOptions
        @Flag(name: .customLong("json"), help: "Print one JSON object of typed values, e.g. {\"count\":{\"int\":5}}.") var json = false

        func run() throws {
            let values = try options.openExisting().map { store in try mapped { try store.dictionaryRepresentation() } } ?? [:]
            if json {
                ItemPrinter.write(Array((try KeyValueText.typedJSON(values) + "\n").utf8))
                return
            }
            let lines = values.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { key, value in
                "\(TextEscaping.escape(key, .cell))\t\(value.typeName)\t\(TextEscaping.escape(KeyValueText.display(value), .cell))\n"
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

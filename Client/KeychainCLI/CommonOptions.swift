import ArgumentParser
import DurableSQLite
import Foundation
import KeychainModel
import KeychainStore
import KeyValueStore
import Synchronization

/// `--keychain PATH`, taken by every verb (and before the verb: ``movedAfterVerb(_:)``).
///
/// A verb that stores something (`add-…`, `import`, `set-passcode`) creates the keychain when there
/// is none; every other verb needs it to exist and otherwise fails naming the path, so that a
/// mistyped path creates nothing and is not taken for an empty keychain (exit 44).
struct KeychainOptions: ParsableArguments {
    @Option(name: .customLong("keychain"), parsing: .unconditional, help: "Keychain database (default: $KEYCHAIN_PATH, else the per-user data directory).", transform: ArgumentEscaping.unescape)
    var path: String?
    @Option(
        name: .customLong("group"), parsing: .unconditional,
        help: "A shared group's items instead of the account's own (the account's name for the group, as `sync-client group list` shows it).",
        transform: ArgumentEscaping.unescape)
    var group: String?

    /// Opens the keychain for a verb that stores something: created when missing.
    func open() throws -> Keychain {
        try Self.open(path, group: group, creating: true)
    }

    /// Opens the keychain for a verb that reads or changes what is there: refused when missing.
    func openExisting() throws -> Keychain {
        try Self.open(path, group: group, creating: false)
    }

    /// Opens the keychain at `path`, else at the default location, for the rest of the process;
    /// without `creating`, only an existing one. With `group`, that shared group's keychain beside
    /// it instead (decision 0295): every item in it is synchronizable, and the sync client shares
    /// it with the group's members.
    static func open(_ path: String?, group: String? = nil, creating: Bool) throws -> Keychain {
        let path = path ?? KeychainLocation.defaultPath()
        let keychain = try group.map { try openGroup($0, besideKeychainAt: path, creating: creating) }
            ?? (creating ? Keychain.open(at: path) : Keychain.openExisting(at: path))
        openKeychains.withLock { $0.append(keychain) }
        return keychain
    }

    /// The keychain of the group the account calls `name`, beside the account's keychain at
    /// `keychainPath` and locked with it (decisions 0295, 0298); without `creating`, only one
    /// this device already holds. A group the account only reads opens refusing every change
    /// (decision 0299).
    /// - Throws: When this device holds no group by that name, the account left it or was removed
    ///   (or, not `creating`, this device holds none of its items yet), or before the account
    ///   keychain's first unlock.
    private static func openGroup(_ name: String, besideKeychainAt keychainPath: String, creating: Bool) throws -> Keychain {
        let recorded: SharedGroupDirectory.Recorded?
        do {
            recorded = try SharedGroupDirectory.group(named: name, besideKeychainAt: keychainPath)
        } catch {
            throw KeychainError(.notAvailable, error.message)
        }
        guard let recorded else {
            throw KeychainError(
                .notAvailable, "this device holds no group called \(name) (`sync-client group list` names the account's groups; a new one reaches this device with its next sync)")
        }
        guard recorded.standing != .departed else {
            throw KeychainError(.notAvailable, "the account is no longer a member of the group \(name) (`sync-client group members \(name)` says so)")
        }
        let path = SharedGroupDirectory.keychainPath(of: recorded.group, besideKeychainAt: keychainPath)
        guard creating || FileKind(atPath: path) != .missing else {
            throw KeychainError(.notAvailable, "this device holds none of the group \(name)'s items yet (its next sync brings them)")
        }
        let account = try Keychain.openExisting(at: keychainPath)
        openKeychains.withLock { $0.append(account) }
        var configuration = Keychain.Configuration()
        configuration.everyItemSynchronizable = true
        configuration.refusesChanges = recorded.refusesChanges
        return try account.openSubordinate(at: path, name: recorded.group, configuration: configuration)
    }

    /// The keychains this process opened, released only by its exit. Releasing one would dispose
    /// GRDB's dispatch queue, and libdispatch starts a worker thread for that which the exit then
    /// waits for (a scheduling delay on a loaded machine, on every `keychain` process). Nothing is
    /// lost by not closing: every verb has committed (or failed) before the process exits, and the
    /// kernel releases the file and its locks (docs/decisions/0160).
    private static let openKeychains = Mutex<[Keychain]>([])

    /// `keychain --keychain PATH VERB …` (or `--keychain=PATH`): the option given before the verb,
    /// as design §7 promises every tool takes it, moved to just after the verb, where the verb
    /// reads it. Anything else is returned unchanged.
    static func movedAfterVerb(_ arguments: [String]) -> [String] {
        guard let first = arguments.first else { return arguments }
        let optionCount = first == "--keychain" ? 2 : first.hasPrefix("--keychain=") ? 1 : 0
        guard optionCount > 0, arguments.count > optionCount else { return arguments }
        let verb = arguments[optionCount]
        // No verb follows (help, another option): the parser says what is wrong.
        guard !verb.hasPrefix("-") else { return arguments }
        return [verb] + arguments[0..<optionCount] + arguments[(optionCount + 1)...]
    }
}

/// `--sync yes|no|any` of the search verbs.
enum SyncFilter: String, ExpressibleByArgument, CaseIterable {
    case yes, no, any

    var match: SynchronizableMatch {
        switch self {
        case .yes: .yes
        case .no: .no
        case .any: .any
        }
    }

    /// The synchronizable flags this filter covers, local first.
    var flags: [Bool] {
        switch self {
        case .yes: [true]
        case .no: [false]
        case .any: [false, true]
        }
    }
}

extension Accessibility: ExpressibleByArgument {
    static let names: [String: Accessibility] = [
        "when-unlocked": .whenUnlocked, "after-first-unlock": .afterFirstUnlock, "always": .always,
        "when-unlocked-this-device-only": .whenUnlockedThisDeviceOnly,
        "after-first-unlock-this-device-only": .afterFirstUnlockThisDeviceOnly,
        "always-this-device-only": .alwaysThisDeviceOnly,
        "when-passcode-set-this-device-only": .whenPasscodeSetThisDeviceOnly,
    ]

    /// Accepts a name such as `when-unlocked` or Apple's code such as `ak`.
    public init?(argument: String) {
        guard let value = Self.names[argument] ?? Accessibility(rawValue: argument) else { return nil }
        self = value
    }

    public static var allValueStrings: [String] { names.keys.sorted() }

    var name: String { Self.names.first { $0.value == self }!.key }
}

/// An add verb, whose password ``KeychainTool`` sets when `-w` was given last, to be typed.
protocol PasswordTakingCommand: ParsableCommand {
    var options: AddOptions { get set }
}

/// The optional attributes of the add verbs, and `-w`, `--sync`, `-U`.
struct AddOptions: ParsableArguments {
    @Option(
        name: .customShort("w"), parsing: .unconditional,
        help: "The password (any value, including one beginning with -). Given last without a value: typed without echo on a terminal (twice), else one line of standard input.",
        transform: ArgumentEscaping.unescape)
    var password: String?
    @Option(name: .customShort("l"), parsing: .unconditional, help: "Label.", transform: ArgumentEscaping.unescape) var label: String?
    @Option(name: .customShort("j"), parsing: .unconditional, help: "Comment.", transform: ArgumentEscaping.unescape) var comment: String?
    @Option(name: .customShort("D"), parsing: .unconditional, help: "Kind (description).", transform: ArgumentEscaping.unescape) var kind: String?
    @Option(name: .customShort("G"), parsing: .unconditional, help: "Generic attribute.", transform: ArgumentEscaping.unescape) var generic: String?
    @Option(name: .customLong("access-group"), parsing: .unconditional, help: "Access group.", transform: ArgumentEscaping.unescape) var accessGroup: String?
    @Option(name: .customLong("accessible"), help: "Accessibility, e.g. when-unlocked, after-first-unlock, always.")
    var accessible: Accessibility?
    @Flag(name: .customLong("sync"), help: "Make the item synchronizable.") var sync = false
    @Flag(name: .customShort("U"), help: "Update the item if it already exists.") var updateExisting = false

    /// The attributes these options set, except the primary-key ones.
    var changes: ItemAttributes {
        var attributes = ItemAttributes()
        attributes.label = label
        attributes.comment = comment
        attributes.itemDescription = kind
        attributes.generic = generic.map { Array($0.utf8) }
        attributes.accessible = accessible
        return attributes
    }

    /// Adds the item; with `-U`, updates the existing item with the same primary key instead.
    func add(_ itemClass: ItemClass, keyAttributes: ItemAttributes, to keychain: Keychain) throws {
        guard let password else { throw ValidationError("missing -w PASSWORD (or -w last, to type the password)") }
        let request = AddRequest(
            itemClass: itemClass, keyAttributes: keyAttributes, changes: changes, password: password, accessGroup: accessGroup,
            sync: sync, updateExisting: updateExisting)
        try request.run(keychain)
    }
}

/// `-l`, `--sync` and `--access-group` of the search verbs.
struct SearchOptions: ParsableArguments {
    @Option(name: .customShort("l"), parsing: .unconditional, help: "Label.", transform: ArgumentEscaping.unescape) var label: String?
    @Option(name: .customLong("access-group"), parsing: .unconditional, help: "Access group.", transform: ArgumentEscaping.unescape) var accessGroup: String?
    @Option(name: .customLong("sync"), help: "Match synchronizable items: yes, no (default) or any.") var sync: SyncFilter = .no
    @Option(name: .customLong("accessible"), help: "Match only this accessibility (while locked, only always-available classes can be searched).")
    var accessible: Accessibility?

    func query(_ itemClass: ItemClass, _ filters: ItemAttributes, limit: MatchLimit = .one, returns: ReturnTypes = []) -> Query {
        SearchRequest(label: label, accessGroup: accessGroup, sync: sync, accessible: accessible)
            .query(itemClass, filters, limit: limit, returns: returns)
    }

    /// Whether any of these options narrows the search to particular items (`--sync` alone does not).
    var narrows: Bool { label != nil || accessGroup != nil || accessible != nil }
}

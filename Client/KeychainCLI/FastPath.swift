import KeychainModel
import KeychainStore

/// The four hot verbs (`find-` and `add-generic-password`, `find-` and `add-internet-password`)
/// read without swift-argument-parser.
///
/// Building the parser's command tree costs about two thirds of a `find -w` process's CPU time
/// (its reflection walks every verb's options through the runtime's conformance tables; see
/// docs/decisions/0160). This reads the plain forms of those verbs: each option spelled as its
/// own token followed by its value, flags alone. Anything else (help, `--name=value`, a repeated
/// or unknown option, a value the parser would refuse, a missing required option) returns nil,
/// and the parser then handles the command line, errors and help included, exactly as before.
/// Both paths build the same ``AddRequest`` or ``SearchRequest``.
enum FastPath {
    /// The options of one verb: those taking a value, the flags, and the ones required. Arrays
    /// searched in order, not sets: a handful of options, and no hashed collection to set up in a
    /// process that reads one command line.
    struct Grammar {
        var values: [String]
        var flags: [String]
        var required: [String]
    }

    /// The options given on a command line, in the order given.
    struct Given {
        var values: [(option: String, value: String)] = []
        var flags: [String] = []

        subscript(_ option: String) -> String? { values.first { $0.option == option }?.value }
    }

    static let search = ["--keychain", "--group", "-a", "-s", "-l", "--access-group", "--sync", "--accessible"]
    static let add = ["--keychain", "--group", "-a", "-s", "-w", "-l", "-j", "-D", "-G", "--access-group", "--accessible"]
    static let internetKey = ["-r", "-P", "-p", "-d", "-t"]

    static func grammar(_ verb: String) -> Grammar? {
        switch verb {
        case "find-generic-password": Grammar(values: search, flags: ["-w"], required: [])
        case "find-internet-password": Grammar(values: search + internetKey, flags: ["-w"], required: [])
        case "add-generic-password": Grammar(values: add, flags: ["--sync", "-U"], required: ["-a", "-s", "-w"])
        case "add-internet-password": Grammar(values: add + internetKey, flags: ["--sync", "-U"], required: ["-a", "-s", "-w"])
        default: nil
        }
    }

    /// Runs the command when it is one of the plain forms; false when the parser must handle it.
    /// - Throws: What the verb throws (the caller maps it to an exit status).
    static func run(_ arguments: [String]) throws -> Bool {
        guard let verb = arguments.first, let grammar = grammar(verb), let given = read(arguments.dropFirst(), grammar) else { return false }
        let itemClass: ItemClass = verb.hasSuffix("internet-password") ? .internetPassword : .genericPassword
        guard let key = keyAttributes(itemClass, given), let accessible = accessibility(given["--accessible"]) else { return false }
        if verb.hasPrefix("find") {
            var sync = SyncFilter.no
            if let text = given["--sync"] {
                guard let filter = SyncFilter(rawValue: text) else { return false }
                sync = filter
            }
            let request = SearchRequest(label: given["-l"], accessGroup: given["--access-group"], sync: sync, accessible: accessible)
            let keychain = try KeychainOptions.open(given["--keychain"], group: given["--group"], creating: false)
            try ItemPrinter.printFound(request.query(itemClass, key), passwordOnly: given.flags.contains("-w"), in: keychain)
        } else {
            var changes = ItemAttributes()
            changes.label = given["-l"]
            changes.comment = given["-j"]
            changes.itemDescription = given["-D"]
            changes.generic = given["-G"].map { Array($0.utf8) }
            changes.accessible = accessible
            let request = AddRequest(
                itemClass: itemClass, keyAttributes: key, changes: changes, password: given["-w"]!,
                accessGroup: given["--access-group"], sync: given.flags.contains("--sync"), updateExisting: given.flags.contains("-U"))
            try request.run(KeychainOptions.open(given["--keychain"], group: given["--group"], creating: true))
        }
        return true
    }

    /// The options' values and the flags given, or nil for anything but the plain form.
    static func read(_ tokens: ArraySlice<String>, _ grammar: Grammar) -> Given? {
        var given = Given()
        var index = tokens.startIndex
        while index < tokens.endIndex {
            let token = tokens[index]
            if grammar.flags.contains(token) {
                guard !given.flags.contains(token) else { return nil }
                given.flags.append(token)
                index += 1
            } else if grammar.values.contains(token), index + 1 < tokens.endIndex, given[token] == nil {
                given.values.append((token, tokens[index + 1]))
                index += 2
            } else {
                return nil
            }
        }
        guard grammar.required.allSatisfy({ given[$0] != nil }) else { return nil }
        return given
    }

    /// The key attributes given (account, service or server, and the internet key options).
    private static func keyAttributes(_ itemClass: ItemClass, _ values: Given) -> ItemAttributes? {
        var attributes = ItemAttributes()
        attributes.account = values["-a"]
        guard itemClass == .internetPassword else {
            attributes.service = values["-s"]
            return attributes
        }
        attributes.server = values["-s"]
        attributes.protocol = values["-r"]
        attributes.path = values["-p"]
        attributes.securityDomain = values["-d"]
        attributes.authenticationType = values["-t"]
        if let port = values["-P"] {
            // The parser reads `-P` as an Int: anything else is its error to report.
            guard !port.hasPrefix("-"), let number = Int(port) else { return nil }
            attributes.port = Int64(number)
        }
        return attributes
    }

    /// `--accessible`: absent (`.some(nil)`), a known class, or nil for the parser to refuse.
    private static func accessibility(_ value: String?) -> Accessibility?? {
        guard let value else { return .some(nil) }
        return Accessibility(argument: value).map { .some($0) }
    }
}

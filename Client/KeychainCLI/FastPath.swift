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
    /// The options of one verb: those taking a value, the flags, and the ones required.
    struct Grammar {
        var values: Set<String>
        var flags: Set<String>
        var required: Set<String>
    }

    static let search: Set<String> = ["--keychain", "-a", "-s", "-l", "--access-group", "--sync", "--accessible"]
    static let add: Set<String> = ["--keychain", "-a", "-s", "-w", "-l", "-j", "-D", "-G", "--access-group", "--accessible"]
    static let internetKey: Set<String> = ["-r", "-P", "-p", "-d", "-t"]

    static let grammars: [String: Grammar] = [
        "find-generic-password": Grammar(values: search, flags: ["-w"], required: []),
        "find-internet-password": Grammar(values: search.union(internetKey), flags: ["-w"], required: []),
        "add-generic-password": Grammar(values: add, flags: ["--sync", "-U"], required: ["-a", "-s", "-w"]),
        "add-internet-password": Grammar(values: add.union(internetKey), flags: ["--sync", "-U"], required: ["-a", "-s", "-w"]),
    ]

    /// Runs the command when it is one of the plain forms; false when the parser must handle it.
    /// - Throws: What the verb throws (the caller maps it to an exit status).
    static func run(_ arguments: [String]) throws -> Bool {
        guard let verb = arguments.first, let grammar = grammars[verb],
            let (values, flags) = read(arguments.dropFirst(), grammar)
        else { return false }
        let itemClass: ItemClass = verb.hasSuffix("internet-password") ? .internetPassword : .genericPassword
        guard let key = keyAttributes(itemClass, values), let accessible = accessibility(values["--accessible"]) else { return false }
        if verb.hasPrefix("find") {
            var sync = SyncFilter.no
            if let text = values["--sync"] {
                guard let filter = SyncFilter(rawValue: text) else { return false }
                sync = filter
            }
            let request = SearchRequest(label: values["-l"], accessGroup: values["--access-group"], sync: sync, accessible: accessible)
            let keychain = try KeychainOptions.open(values["--keychain"])
            try ItemPrinter.printFound(request.query(itemClass, key), passwordOnly: flags.contains("-w"), in: keychain)
        } else {
            var changes = ItemAttributes()
            changes.label = values["-l"]
            changes.comment = values["-j"]
            changes.itemDescription = values["-D"]
            changes.generic = values["-G"].map { Array($0.utf8) }
            changes.accessible = accessible
            let request = AddRequest(
                itemClass: itemClass, keyAttributes: key, changes: changes, password: values["-w"]!,
                accessGroup: values["--access-group"], sync: flags.contains("--sync"), updateExisting: flags.contains("-U"))
            try request.run(KeychainOptions.open(values["--keychain"]))
        }
        return true
    }

    /// The options' values and the flags given, or nil for anything but the plain form.
    static func read(_ tokens: ArraySlice<String>, _ grammar: Grammar) -> (values: [String: String], flags: Set<String>)? {
        var values: [String: String] = [:]
        var flags: Set<String> = []
        var index = tokens.startIndex
        while index < tokens.endIndex {
            let token = tokens[index]
            if grammar.flags.contains(token) {
                guard flags.insert(token).inserted else { return nil }
                index += 1
            } else if grammar.values.contains(token), index + 1 < tokens.endIndex, values[token] == nil {
                values[token] = tokens[index + 1]
                index += 2
            } else {
                return nil
            }
        }
        guard grammar.required.isSubset(of: values.keys) else { return nil }
        return (values, flags)
    }

    /// The key attributes given (account, service or server, and the internet key options).
    private static func keyAttributes(_ itemClass: ItemClass, _ values: [String: String]) -> ItemAttributes? {
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

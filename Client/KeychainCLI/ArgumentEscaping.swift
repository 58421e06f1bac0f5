/// Lets an option's value be `--`. swift-argument-parser's `.unconditional` parsing takes values
/// that begin with `-`, but it splits the command line at `--` before parsing. So before parsing,
/// a value that is exactly `--` (or begins with the marker) gets a private-use marker in front,
/// and every string option removes it again.
enum ArgumentEscaping {
    static let marker = "\u{E000}"

    static let valueOptions: Set<String> = [
        "-a", "-s", "-w", "-l", "-j", "-D", "-G", "-r", "-P", "-p", "-d", "-t", "--access-group", "--accessible",
        "--keychain", "--group", "--from", "--sync", "--passcode-file", "--new-passcode-file", "--restore",
    ]

    /// Options that are flags (take no value) in some verbs.
    static let flagsByVerb: [String: Set<String>] = [
        "find-generic-password": ["-w"], "find-internet-password": ["-w"], "dump-keychain": ["-d", "--json"],
        "add-generic-password": ["--sync", "-U"], "add-internet-password": ["--sync", "-U"], "history": ["-w"], "import": ["--sync"],
    ]

    /// `history` took `--sync` as a flag before it took `yes|no|any`: a bare `--sync` there still
    /// means the synchronizable item.
    static let syncValues: Set<String> = ["yes", "no", "any"]

    static func escape(_ arguments: [String]) -> [String] {
        guard let verb = arguments.first else { return arguments }
        let takesValue = valueOptions.subtracting(flagsByVerb[verb] ?? [])
        var escaped = [verb]
        var index = 1
        while index < arguments.count {
            let token = arguments[index]
            escaped.append(token)
            if verb == "history", token == "--sync", index + 1 == arguments.count || !syncValues.contains(arguments[index + 1]) {
                escaped.append("yes")
                index += 1
                continue
            }
            if token == "--" {
                escaped += arguments[(index + 1)...]
                break
            }
            if takesValue.contains(token), index + 1 < arguments.count {
                let value = arguments[index + 1]
                escaped.append(value == "--" || value.hasPrefix(marker) ? marker + value : value)
                index += 2
            } else {
                index += 1
            }
        }
        return escaped
    }

    static func unescape(_ value: String) -> String {
        value.hasPrefix(marker) ? String(value.dropFirst(marker.count)) : value
    }
}

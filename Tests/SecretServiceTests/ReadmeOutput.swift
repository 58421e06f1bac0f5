import Foundation

/// What README shows after a command, as a pattern for what the terminal really shows: every line
/// exactly, except README's example values (a generated password, a request ID, an approval code,
/// a time, a device ID), which match any value of their form, and a line that is `…` alone, which
/// stands for any lines. An example value with a name is one value for the whole walkthrough: its
/// first occurrence captures it, every later one (in the same output or in a later command's)
/// must be the same.
struct ReadmeOutput {
    /// An example value in README, between literal text that tells it apart (`prefix`, `suffix`).
    struct Example {
        var prefix = ""
        var value: String
        var suffix = ""
        var pattern: String
        /// The name its value is kept under, for the lines and commands that repeat it.
        var name: String?

        var text: String { prefix + value + suffix }
    }

    static let time = #"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z"#
    static let examples = [
        Example(value: "fyxq2k-hbwz8c-pTdmur", pattern: "[A-Za-z0-9]{6}-[A-Za-z0-9]{6}-[A-Za-z0-9]{6}"),
        Example(value: "7kq2m9xd", pattern: "[a-z0-9]{8}", name: "request"),
        Example(value: "4TRA-QH3Z", pattern: "[0-9A-Z]{4}-[0-9A-Z]{4}", name: "code"),
        Example(value: "3f0c…", pattern: "[0-9a-f]{32}"),
        Example(value: "XXXX-…", pattern: "[A-Z2-7]{4}(?:-[A-Z2-7]{4})+", name: "recoveryKey"),
        Example(value: "2026-11-25T10:02:11Z", pattern: time, name: "recorded"),
        Example(value: "2026-11-25T10:01:40Z", pattern: time, name: "modified"),
        Example(value: "2026-11-25T10:01:40.5213Z", pattern: #"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z"#),
        // An earlier version's number: the history's first column, and the restore's.
        Example(value: "3", suffix: "\t", pattern: #"\d+"#, name: "version"),
        Example(prefix: "restored version ", value: "3", pattern: #"\d+"#, name: "version"),
        Example(prefix: "--restore ", value: "3", pattern: #"\d+"#, name: "version"),
        Example(prefix: "kept as version ", value: "4", pattern: #"\d+"#),
    ]

    /// The values captured so far, by name.
    private(set) var captured: [String: String] = [:]

    /// Whether `shown` is what `readme` shows; on a match, the named values it held are kept.
    mutating func matches(_ shown: String, _ readme: [String]) throws -> Bool {
        var names: [String] = []
        var pattern = #"\A"#
        for line in readme {
            if line == "…" {
                pattern += #"(?:[^\n]*\n)*?"#
            } else {
                pattern += self.pattern(for: line, names: &names) + #"\n"#
            }
        }
        pattern += #"\z"#
        // A terminal shows no trailing blanks (a prompt's last space, before the answer).
        var text = shown.split(separator: "\n", omittingEmptySubsequences: false)
            .map { String($0.reversed().drop { $0 == " " }.reversed()) }.joined(separator: "\n")
        if !text.isEmpty && !text.hasSuffix("\n") { text += "\n" }
        let expression = try NSRegularExpression(pattern: pattern)
        guard let match = expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) else { return false }
        for name in names {
            if let range = Range(match.range(withName: name), in: text) { captured[name] = String(text[range]) }
        }
        return true
    }

    /// `line` as a regular expression: its example values as patterns, the rest literal.
    private func pattern(for line: String, names: inout [String]) -> String {
        var pattern = ""
        var rest = Substring(line)
        while !rest.isEmpty {
            guard let example = Self.examples.first(where: { rest.hasPrefix($0.text) }) else {
                pattern += NSRegularExpression.escapedPattern(for: String(rest.first!))
                rest = rest.dropFirst()
                continue
            }
            rest = rest.dropFirst(example.text.count)
            pattern += NSRegularExpression.escapedPattern(for: example.prefix)
            if let name = example.name, let value = captured[name] {
                pattern += NSRegularExpression.escapedPattern(for: value)
            } else if let name = example.name, names.contains(name) {
                pattern += #"\k<"# + name + ">"
            } else if let name = example.name {
                names.append(name)
                pattern += "(?<\(name)>\(example.pattern))"
            } else {
                pattern += "(?:\(example.pattern))"
            }
            pattern += NSRegularExpression.escapedPattern(for: example.suffix)
        }
        return pattern
    }

    /// Keeps `value` under `name`, for the commands that name it.
    mutating func keep(_ value: String, as name: String) {
        captured[name] = value
    }

    /// `command` with the example values it names replaced by the values captured for them.
    func filling(_ command: String) -> String {
        Self.examples.reduce(command) { command, example in
            guard let name = example.name, let value = captured[name] else { return command }
            return command.replacingOccurrences(of: example.text, with: example.prefix + value + example.suffix)
        }
    }
}

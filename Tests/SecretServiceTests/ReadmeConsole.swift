import Foundation

/// README.md's console blocks, read from the file itself: the walkthrough as the README shows it,
/// a command (`$ `, or `old$ `/`new$ ` for the two devices of the approval) with the lines the
/// terminal shows after it, and the notes between them (`  # on the second device, …`).
struct ReadmeConsole {
    /// One command as README writes it.
    struct Command: CustomStringConvertible {
        /// What comes before `$`: empty, or the device (`old`, `new`).
        var prompt: String
        /// The command line(s), without the comment; a line ending in `\` runs on into the next.
        var text: String
        /// The comment after `#`, which says what the command does or prints instead of showing it.
        var comment: String?
        /// README.md's line number.
        var line: Int

        var description: String { "README.md:\(line): \(prompt)$ \(text)" }
    }

    /// A command with the lines shown after it, or a note with the lines shown after it.
    struct Step {
        enum Kind {
            case command(Command)
            case note(String)
        }

        var kind: Kind
        var output: [String]
    }

    struct Block {
        /// README.md's line number of the opening fence.
        var line: Int
        var steps: [Step]

        var commands: [Command] {
            steps.compactMap {
                guard case .command(let command) = $0.kind else { return nil }
                return command
            }
        }
    }

    let blocks: [Block]

    /// The repository's README.md.
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("README.md")

    init(contentsOf file: URL = ReadmeConsole.file) throws {
        blocks = Self.parse(try String(contentsOf: file, encoding: .utf8))
    }

    static func parse(_ text: String) -> [Block] {
        var blocks: [Block] = []
        var current: Block?
        var fenceIndent = ""
        var continuing = false
        for (index, rawLine) in text.components(separatedBy: "\n").enumerated() {
            let number = index + 1
            let trimmed = rawLine.trimmingCharacters(in: .whitespaces)
            guard var block = current else {
                if trimmed == "```console" {
                    current = Block(line: number, steps: [])
                    fenceIndent = String(rawLine.prefix { $0 == " " })
                }
                continue
            }
            if trimmed == "```" {
                blocks.append(block)
                current = nil
                continue
            }
            // A block inside a list item is indented as a whole.
            let line = rawLine.hasPrefix(fenceIndent) ? String(rawLine.dropFirst(fenceIndent.count)) : rawLine
            if continuing, let last = block.steps.indices.last, case .command(var command) = block.steps[last].kind {
                let (text, comment) = splitComment(line)
                command.text += "\n" + text
                command.comment = command.comment ?? comment
                continuing = text.hasSuffix("\\")
                block.steps[last].kind = .command(command)
            } else if let dollar = line.range(of: "$ "), line[..<dollar.lowerBound].allSatisfy({ $0.isLetter }) {
                let (text, comment) = splitComment(String(line[dollar.upperBound...]))
                let command = Command(prompt: String(line[..<dollar.lowerBound]), text: text, comment: comment, line: number)
                block.steps.append(Step(kind: .command(command), output: []))
                continuing = text.hasSuffix("\\")
            } else if line.hasPrefix(" "), trimmed.hasPrefix("#") {
                // After a commented command, an indented comment carries its comment on.
                if let last = block.steps.indices.last, block.steps[last].output.isEmpty, case .command(var command) = block.steps[last].kind,
                    command.comment != nil, line.hasPrefix("     ")
                {
                    command.comment! += " " + trimmed.dropFirst().trimmingCharacters(in: .whitespaces)
                    block.steps[last].kind = .command(command)
                } else {
                    block.steps.append(Step(kind: .note(trimmed.dropFirst().trimmingCharacters(in: .whitespaces)), output: []))
                }
            } else if let last = block.steps.indices.last {
                block.steps[last].output.append(line)
            }
            current = block
        }
        return blocks
    }

    /// The command and its comment: the comment starts at the first `#` after two spaces.
    private static func splitComment(_ line: String) -> (String, String?) {
        guard let hash = line.range(of: "  # ") else { return (line.trimmingCharacters(in: .whitespaces), nil) }
        return (
            line[..<hash.lowerBound].trimmingCharacters(in: .whitespaces),
            line[hash.upperBound...].trimmingCharacters(in: .whitespaces)
        )
    }
}

import KeychainModel

/// A CSV file as RFC 4180 writes it (what Bitwarden, KeePassXC, Chrome and Firefox export):
/// fields separated by commas, quoted fields may hold commas, quotes (doubled) and newlines.
/// The first row names the columns.
struct CSVTable {
    /// One data row: its fields by column name, and the line it starts on (for error messages).
    struct Row {
        var line: Int
        var fields: [String: String]

        /// The field, or nil when the column is missing or the field is empty.
        subscript(_ column: String) -> String? {
            fields[column].flatMap { $0.isEmpty ? nil : $0 }
        }
    }

    var columns: [String]
    var rows: [Row]

    /// Parses `text`; a malformed file is refused with the line it failed on (and never a field's
    /// value, which may be a password).
    init(_ text: String) throws(KeychainError) {
        var records: [(line: Int, fields: [String])] = []
        var fields: [String] = []
        var field = ""
        var quoted = false
        var afterQuote = false
        var line = 1
        var recordLine = 1
        var characters = text.hasPrefix("\u{FEFF}") ? Substring(text.dropFirst()) : Substring(text)
        if characters.isEmpty { throw KeychainError(.param, "line 1: the file is empty") }
        func endRecord() {
            fields.append(field)
            field = ""
            if !(fields.count == 1 && fields[0].isEmpty) { records.append((recordLine, fields)) }
            fields = []
        }
        while let character = characters.popFirst() {
            if quoted {
                if character == "\"" {
                    if characters.first == "\"" {
                        characters.removeFirst()
                        field.append("\"")
                    } else {
                        quoted = false
                        afterQuote = true
                    }
                } else {
                    if character.isNewline { line += 1 }
                    field.append(character)
                }
                continue
            }
            switch character {
            case ",":
                fields.append(field)
                field = ""
                afterQuote = false
            case "\r\n", "\n", "\r":
                endRecord()
                afterQuote = false
                line += 1
                recordLine = line
            case "\"" where field.isEmpty && !afterQuote:
                quoted = true
            default:
                guard !afterQuote else { throw KeychainError(.param, "line \(line): text after a closing quote") }
                field.append(character)
            }
        }
        if quoted { throw KeychainError(.param, "line \(recordLine): a quoted field is never closed") }
        if !field.isEmpty || !fields.isEmpty { endRecord() }
        guard let header = records.first else { throw KeychainError(.param, "line 1: the file has no header row") }
        columns = header.fields.map { $0.trimmingSpaces() }
        rows = []
        for record in records.dropFirst() {
            guard record.fields.count == columns.count else {
                throw KeychainError(.param, "line \(record.line): \(record.fields.count) fields where the header has \(columns.count)")
            }
            rows.append(Row(line: record.line, fields: Dictionary(zip(columns, record.fields), uniquingKeysWith: { first, _ in first })))
        }
    }

    /// Refuses a file without the columns a format needs, naming them.
    func require(_ needed: [String], format: String) throws(KeychainError) {
        let missing = needed.filter { !columns.contains($0) }
        guard missing.isEmpty else {
            throw KeychainError(.param, "line 1: not a \(format) file (no column \(missing.joined(separator: ", ")))")
        }
    }
}

extension String {
    func trimmingSpaces() -> String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}

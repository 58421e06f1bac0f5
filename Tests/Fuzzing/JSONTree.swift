/// A JSON document as a tree whose scalars keep their text, so that a mutation can write what no
/// encoder writes (`1e400`, `-0`, a key twice) and the rest of the document stays as it was.
indirect enum JSONTree: Sendable {
    /// A number, `true`, `false` or `null`, as written.
    case scalar(String)
    case string(String)
    case array([JSONTree])
    case object([(key: String, value: JSONTree)])

    /// The tree of a JSON text; nil when the text is not JSON this small reader takes (the seeds are
    /// all written by the product's encoders).
    init?(parsing bytes: [UInt8]) {
        var reader = Reader(bytes: bytes)
        guard let tree = reader.value(depth: 0) else { return nil }
        reader.skipSpace()
        guard reader.index == bytes.count else { return nil }
        self = tree
    }

    /// The text of the tree, without spaces.
    var text: String {
        var out = ""
        write(to: &out)
        return out
    }

    func write(to out: inout String) {
        switch self {
        case .scalar(let text): out += text
        case .string(let text): JSONTree.quote(text, to: &out)
        case .array(let elements):
            out += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { out += "," }
                element.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, member) in members.enumerated() {
                if index > 0 { out += "," }
                JSONTree.quote(member.key, to: &out)
                out += ":"
                member.value.write(to: &out)
            }
            out += "}"
        }
    }

    static func quote(_ text: String, to out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }

    /// The number of nodes, this one included.
    var count: Int {
        switch self {
        case .scalar, .string: 1
        case .array(let elements): 1 + elements.reduce(0) { $0 + $1.count }
        case .object(let members): 1 + members.reduce(0) { $0 + $1.value.count }
        }
    }

    /// The tree with its node number `target` (preorder) replaced by what `change` makes of it.
    func replacing(_ target: Int, with change: (JSONTree) -> JSONTree) -> JSONTree {
        var position = 0
        return replacing(target, &position, change)
    }

    private func replacing(_ target: Int, _ position: inout Int, _ change: (JSONTree) -> JSONTree) -> JSONTree {
        if position == target {
            position += count
            return change(self)
        }
        position += 1
        switch self {
        case .scalar, .string: return self
        case .array(let elements):
            return .array(elements.map { position > target ? $0 : $0.replacing(target, &position, change) })
        case .object(let members):
            return .object(members.map { position > target ? $0 : ($0.key, $0.value.replacing(target, &position, change)) })
        }
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) { index += 1 }
        }

        mutating func value(depth: Int) -> JSONTree? {
            skipSpace()
            guard index < bytes.count, depth < 200 else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                var members: [(key: String, value: JSONTree)] = []
                skipSpace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
                while true {
                    skipSpace()
                    guard let key = string(), expect(UInt8(ascii: ":")), let value = value(depth: depth + 1) else { return nil }
                    members.append((key, value))
                    skipSpace()
                    guard index < bytes.count else { return nil }
                    index += 1
                    if bytes[index - 1] == UInt8(ascii: "}") { return .object(members) }
                    guard bytes[index - 1] == UInt8(ascii: ",") else { return nil }
                }
            case UInt8(ascii: "["):
                index += 1
                var elements: [JSONTree] = []
                skipSpace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
                while true {
                    guard let element = value(depth: depth + 1) else { return nil }
                    elements.append(element)
                    skipSpace()
                    guard index < bytes.count else { return nil }
                    index += 1
                    if bytes[index - 1] == UInt8(ascii: "]") { return .array(elements) }
                    guard bytes[index - 1] == UInt8(ascii: ",") else { return nil }
                }
            case UInt8(ascii: "\""):
                return string().map(JSONTree.string)
            default:
                let start = index
                while index < bytes.count, !",]} \n\r\t".utf8.contains(bytes[index]) { index += 1 }
                return index > start ? .scalar(String(decoding: bytes[start..<index], as: UTF8.self)) : nil
            }
        }

        mutating func expect(_ byte: UInt8) -> Bool {
            skipSpace()
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// A string, escapes decoded (`\uXXXX` of one scalar; a surrogate pair stays two replacement characters).
        mutating func string() -> String? {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            index += 1
            var scalars = String.UnicodeScalarView()
            var raw: [UInt8] = []
            func flush() {
                scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars)
                raw.removeAll()
            }
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    flush()
                    return String(scalars)
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { return nil }
                    let escape = bytes[index]
                    index += 1
                    flush()
                    switch escape {
                    case UInt8(ascii: "n"): scalars.append("\n")
                    case UInt8(ascii: "r"): scalars.append("\r")
                    case UInt8(ascii: "t"): scalars.append("\t")
                    case UInt8(ascii: "b"): scalars.append("\u{08}")
                    case UInt8(ascii: "f"): scalars.append("\u{0C}")
                    case UInt8(ascii: "u"):
                        guard index + 4 <= bytes.count, let code = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
                        else { return nil }
                        index += 4
                        scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
                    default: scalars.append(Unicode.Scalar(escape))
                    }
                default: raw.append(byte)
                }
            }
            return nil
        }
    }
}

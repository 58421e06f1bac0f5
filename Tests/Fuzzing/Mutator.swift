import ShippedSimulation

/// Makes inputs from a target's seeds: byte mutations (bit flips, interesting values, inserts,
/// deletions, copies, splices of two seeds, the target's own tokens), and for a JSON target
/// mutations of the document's tree (a value of the wrong type, huge and odd numbers, NaN-like
/// strings, long strings, deep nesting, a key twice, a key missing or unknown). One to eight
/// mutations are stacked; the result is at most `maximumLength` bytes.
package struct Mutator: Sendable {
    package var maximumLength: Int
    let seeds: [[UInt8]]
    let trees: [JSONTree?]
    let tokens: [[UInt8]]
    let isJSON: Bool

    package init(target: FuzzTarget, maximumLength: Int) {
        self.maximumLength = maximumLength
        seeds = target.seeds.isEmpty ? [[]] : target.seeds
        isJSON = target.isJSON
        trees = target.isJSON ? seeds.map { JSONTree(parsing: $0) } : []
        tokens = target.tokens.map { Array($0.utf8) } + (target.isJSON ? Self.jsonTokens : Self.binaryTokens)
    }

    /// A new input.
    package func input(_ random: inout SplitMix64) -> [UInt8] {
        let index = random.below(seeds.count)
        var bytes: [UInt8]
        if isJSON, let tree = trees[index], random.below(3) != 0 {
            var mutated = tree
            for _ in 0...random.below(3) { mutated = mutate(mutated, &random) }
            bytes = Array(mutated.text.utf8)
            if random.below(4) == 0 { bytes = mutate(bytes, &random) }
        } else {
            bytes = seeds[index]
            for _ in 0...random.below(8) { bytes = mutate(bytes, &random) }
        }
        if bytes.count > maximumLength { bytes.removeLast(bytes.count - maximumLength) }
        return bytes
    }

    // MARK: Bytes

    static let interestingBytes: [UInt8] = [0, 1, 0x7F, 0x80, 0xFF, 0x20, 0x22, 0x2C, 0x0A, 0x5C, 0xC0, 0xED]
    static let interestingWords: [UInt64] = [0, 1, 0x7F, 0x80, 0xFF, 0x100, 0x7FFF, 0xFFFF, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 0x7FFF_FFFF_FFFF_FFFF, 0x8000_0000_0000_0000, .max]
    static let binaryTokens: [[UInt8]] = [[0, 0, 0, 0], [0xFF, 0xFF, 0xFF, 0xFF], [0x7F, 0xFF, 0xFF, 0xFF], [0xC3, 0x28], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80]]
    static let jsonTokens: [[UInt8]] = [
        "{", "}", "[", "]", "\"", ",", ":", "null", "true", "1e308", "-1e400", "NaN", "-0", "18446744073709551616",
        "-9223372036854775809", "\\u0000", "\\ud800", "\"\":", "[[[[[[[[", "{\"a\":{\"a\":{\"a\":",
    ].map { Array($0.utf8) }

    func mutate(_ input: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
        var bytes = input
        switch random.below(bytes.isEmpty ? 2 : 11) {
        case 0:  // insert random bytes
            let count = 1 + random.below(8)
            let at = random.below(bytes.count + 1)
            bytes.insert(contentsOf: (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) }, at: at)
        case 1:  // insert a token
            let token = tokens[random.below(tokens.count)]
            bytes.insert(contentsOf: token, at: random.below(bytes.count + 1))
        case 2:  // flip a bit
            let at = random.below(bytes.count)
            bytes[at] ^= 1 << random.below(8)
        case 3:  // an interesting byte
            bytes[random.below(bytes.count)] = Self.interestingBytes[random.below(Self.interestingBytes.count)]
        case 4:  // a random byte
            bytes[random.below(bytes.count)] = UInt8(truncatingIfNeeded: random.next())
        case 5:  // delete a range
            let at = random.below(bytes.count)
            bytes.removeSubrange(at..<min(bytes.count, at + 1 + random.below(16)))
        case 6:  // copy a range elsewhere
            let from = random.below(bytes.count)
            let part = bytes[from..<min(bytes.count, from + 1 + random.below(32))]
            bytes.insert(contentsOf: part, at: random.below(bytes.count + 1))
        case 7:  // an interesting big-endian word (lengths, counts, epochs)
            let width = [1, 2, 4, 8][random.below(4)]
            let word = Self.interestingWords[random.below(Self.interestingWords.count)]
            let at = random.below(bytes.count)
            for offset in 0..<width where at + offset < bytes.count {
                bytes[at + offset] = UInt8(truncatingIfNeeded: word >> (8 * (width - 1 - offset)))
            }
        case 8:  // splice with another seed
            let other = seeds[random.below(seeds.count)]
            let cut = random.below(bytes.count + 1)
            let otherCut = random.below(other.count + 1)
            bytes = Array(bytes[..<cut]) + other[otherCut...]
        case 9:  // truncate
            bytes.removeLast(random.below(bytes.count) + 1)
        default:  // an arithmetic change of one byte
            let at = random.below(bytes.count)
            bytes[at] = bytes[at] &+ UInt8(truncatingIfNeeded: random.below(70) - 35)
        }
        return bytes
    }

    // MARK: JSON

    static let oddScalars = [
        "1e308", "-1e308", "1e400", "-1e400", "1e-400", "-0", "0.0", "18446744073709551616", "18446744073709551615", "-9223372036854775809",
        "9223372036854775807", "9007199254740993", "4294967296", "-1", "1.5", "123456789012345678901234567890", "true", "false", "null",
    ]
    static let oddStrings = ["NaN", "Infinity", "-Infinity", "nan", "inf", "", "\u{0}", "\u{FEFF}", "é", "🔑", "%00", "../../etc", "1e16", "9999-12-31T23:59:59Z"]

    func mutate(_ tree: JSONTree, _ random: inout SplitMix64) -> JSONTree {
        let target = random.below(tree.count)
        let choice = random.below(10)
        // Kept for the splice: a node of another seed.
        let donorIndex = random.below(trees.count)
        let donorTree = trees[donorIndex]
        let donorTarget = donorTree.map { random.below($0.count) } ?? 0
        var nested = 1 + random.below(3000)
        let longCount = 1 + random.below(40_000)
        let scalar = Self.oddScalars[random.below(Self.oddScalars.count)]
        let string = Self.oddStrings[random.below(Self.oddStrings.count)]
        let pick = random.next()
        return tree.replacing(target) { node in
            switch choice {
            case 0: return .scalar(scalar)  // a number or literal where anything was
            case 1: return .string(string)  // a NaN-like or odd string
            case 2: return .string(String(repeating: "a", count: longCount))  // a long string
            case 3:  // deep nesting around the value
                var deep = node
                while nested > 0 { deep = pick & 1 == 0 ? .array([deep]) : .object([("a", deep)]); nested -= 1 }
                return deep
            case 4:  // the wrong container
                switch node {
                case .array(let elements): return .object(elements.enumerated().map { ("\($0.offset)", $0.element) })
                case .object(let members): return .array(members.map(\.value))
                case .string(let text): return .array([.string(text)])
                case .scalar(let text): return .string(text)
                }
            case 5:  // a member twice, or an element repeated
                switch node {
                case .object(let members) where !members.isEmpty:
                    let member = members[Int(pick % UInt64(members.count))]
                    return .object(members + [(member.key, .scalar(scalar))])
                case .array(let elements) where !elements.isEmpty:
                    return .array(elements + Array(repeating: elements[Int(pick % UInt64(elements.count))], count: 1 + Int(pick % 64)))
                default: return .scalar("null")
                }
            case 6:  // a member missing
                if case .object(var members) = node, !members.isEmpty {
                    members.remove(at: Int(pick % UInt64(members.count)))
                    return .object(members)
                }
                return .array([])
            case 7:  // an unknown member
                if case .object(let members) = node { return .object(members + [("unknown\(pick % 4)", .string(string))]) }
                return node
            case 8:  // a node of another seed
                var donated = node
                _ = donorTree?.replacing(donorTarget) { other in donated = other; return other }
                return donated
            default:  // an empty container
                return pick & 1 == 0 ? .array([]) : .object([])
            }
        }
    }
}

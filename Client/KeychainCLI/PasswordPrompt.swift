import KeychainModel

#if canImport(Glibc)
import Glibc
private let systemRead = Glibc.read
#elseif canImport(Musl)
import Musl
private let systemRead = Musl.read
#elseif canImport(Darwin)
import Darwin
private let systemRead = Darwin.read
#endif

/// `-w` given last, without a value, to an add verb: the password is typed, not written on the
/// command line, as macOS `security` does it. On a terminal it is asked twice without echo and
/// must match; otherwise one line of standard input is the password (its newline removed).
enum PasswordPrompt {
    /// The verbs whose `-w` takes a value that may be typed instead. An array, not a set: every
    /// `keychain` process asks, and builds no hashed collection for it (decision 0160).
    static let verbs = ["add-generic-password", "add-internet-password"]

    /// The longest password read from standard input, in bytes (a bound where it enters, 0258).
    static let maximumBytes = 1 << 20

    /// `arguments` without their last token when it is `-w` in an option's place (not another
    /// option's value, not after `--`) and the verb is an add verb; nil otherwise.
    static func withoutTrailingDashW(_ arguments: [String]) -> [String]? {
        // The last token first: the common command line stops here.
        guard arguments.count > 1, arguments.last == "-w", let verb = arguments.first, verbs.contains(verb) else { return nil }
        let takesValue = ArgumentEscaping.valueOptions.subtracting(ArgumentEscaping.flagsByVerb[verb] ?? [])
        var index = 1
        while index < arguments.count - 1 {
            let token = arguments[index]
            if token == "--" { return nil }
            index += takesValue.contains(token) ? 2 : 1
        }
        // The scan ends on the last token only when it was not taken as a value.
        return index == arguments.count - 1 ? Array(arguments.dropLast()) : nil
    }

    /// The password: typed twice on a terminal, else one line of standard input.
    /// - Throws: `KeychainError` when the two entries differ, or nothing could be read.
    static func read() throws -> String {
        guard isatty(STDIN_FILENO) == 1 else { return try readLine() }
        let first = try typed("password data for new item: ")
        let second = try typed("retype password for new item: ")
        guard first == second else { throw KeychainError(.param, "the two passwords typed differ; nothing was stored") }
        return first
    }

    /// One entry on the terminal, without echo.
    private static func typed(_ prompt: String) throws -> String {
        guard let entered = getpass(prompt) else { throw KeychainError(.param, "cannot read the password from the terminal") }
        let text = String(cString: entered)
        // getpass returns its own buffer: cleared once copied.
        memset(entered, 0, strlen(entered))
        return text
    }

    /// The first line of standard input, without its line ending; at most ``maximumBytes``.
    private static func readLine() throws -> String {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !bytes.contains(UInt8(ascii: "\n")) {
            let count = chunk.withUnsafeMutableBytes { systemRead(STDIN_FILENO, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
            guard bytes.count <= maximumBytes + 1 else {
                throw KeychainError(.param, "the password on standard input is longer than \(maximumBytes) bytes")
            }
        }
        chunk.withUnsafeMutableBytes { _ = memset($0.baseAddress!, 0, $0.count) }
        guard !bytes.isEmpty else {
            throw KeychainError(.param, "no password on standard input (give -w PASSWORD, or -w last on a terminal or with the password piped in)")
        }
        var line = bytes.split(separator: UInt8(ascii: "\n"), maxSplits: 1, omittingEmptySubsequences: false)[0]
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        guard line.count <= maximumBytes else {
            throw KeychainError(.param, "the password on standard input is longer than \(maximumBytes) bytes")
        }
        return String(decoding: line, as: UTF8.self)
    }
}

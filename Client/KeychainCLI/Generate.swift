import ArgumentParser
import KeychainModel

/// `keychain generate [--length N] [--charset SET]`: prints a new password, alone on its line
/// (design §7). By default Apple's strong-password format, `xxxxxx-xxxxxx-xxxxxx`; `--length`
/// alone gives that many letters and digits. Nothing is stored and no keychain is opened.
struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate", abstract: "Print a new random password (default: Apple's format, xxxxxx-xxxxxx-xxxxxx).")

    @Option(name: .customLong("length"), help: "How many characters (1 to 1024; with --length alone: letters and digits).") var length: Int?
    @Option(
        name: .customLong("charset"),
        help: "apple (the default: xxxxxx-xxxxxx-xxxxxx), alphanumeric, ascii (printable, no space), lowercase (and digits), digits or hex.")
    var charset: String?

    func run() throws {
        guard let set = PasswordGenerator.Charset(rawValue: charset ?? (length == nil ? "apple" : "alphanumeric")) else {
            throw ValidationError("--charset must be one of \(PasswordGenerator.Charset.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var generator = SystemRandomNumberGenerator()
        let password: String
        if set == .apple {
            guard length == nil || length == 20 else {
                throw ValidationError("the apple format is 20 characters (xxxxxx-xxxxxx-xxxxxx); give --charset for another length")
            }
            password = PasswordGenerator.apple(using: &generator)
        } else {
            let length = length ?? 20
            guard PasswordGenerator.lengths.contains(length) else {
                throw ValidationError("--length must be 1 to \(PasswordGenerator.lengths.upperBound)")
            }
            password = PasswordGenerator.password(length: length, charset: set, using: &generator)
        }
        ItemPrinter.write(Array((password + "\n").utf8))
    }
}

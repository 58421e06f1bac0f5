import ArgumentParser
import KeychainModel

/// The `keychain` command: a local keychain in the style of macOS `security`.
public struct KeychainTool: ParsableCommand {
    /// The command's name, summary and verbs.
    public static let configuration = CommandConfiguration(
        commandName: "keychain",
        abstract: "Manage the local synchronizable keychain.",
        subcommands: [
            AddGenericPassword.self, FindGenericPassword.self, DeleteGenericPassword.self,
            AddInternetPassword.self, FindInternetPassword.self, DeleteInternetPassword.self,
            DumpKeychain.self, History.self, Import.self, Export.self, Generate.self, TOTP.self, Audit.self, Lock.self, Unlock.self, SetPasscode.self, KeyValueCommand.self,
            MoveItem.self, SecretServiceCommand.self,
        ])

    /// Creates the root command (the verbs do the work).
    public init() {}

    /// The most arguments a command line may have (without the program name). The longest command
    /// line the verbs take has about 35; swift-argument-parser's work grows with the square of the
    /// count (8,000 arguments took 26 s in a debug build, 1,000 took 0.5 s, 256 take 0.07 s), so a
    /// longer one is refused before anything reads it. Their bytes need no bound of ours: the
    /// kernel's (128 KiB an argument, `ARG_MAX` in all) keeps the parser's work small.
    static let maximumArguments = 256

    /// Runs the tool with `arguments` (without the program name) and returns the exit code.
    /// Errors are written to stderr as one line.
    public static func run(arguments: [String]) -> Int32 {
        do {
            guard arguments.count <= maximumArguments else {
                throw ValidationError("too many arguments (\(arguments.count); at most \(maximumArguments))")
            }
            var arguments = KeychainOptions.movedAfterVerb(arguments)
            // `-w` last, to be typed: the parser reads the rest, then the password is asked.
            let typed = PasswordPrompt.withoutTrailingDashW(arguments)
            if let typed {
                arguments = typed
            } else if try FastPath.run(arguments) {
                return ExitStatus.success
            }
            var command = try parseAsRoot(ArgumentEscaping.escape(arguments))
            if typed != nil, var adding = command as? any PasswordTakingCommand {
                guard adding.options.password == nil else { throw ValidationError("-w is given twice") }
                adding.options.password = try PasswordPrompt.read()
                command = adding
            }
            try command.run()
            return ExitStatus.success
        } catch {
            let (code, message) = ExitStatus.report(error)
            if let message {
                let text = code == 0 ? message + "\n" : "keychain: " + ExitStatus.oneLine(message) + "\n"
                StandardStream.write(Array(text.utf8), to: code == 0 ? .output : .error)
            }
            return code
        }
    }
}

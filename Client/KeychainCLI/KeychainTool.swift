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
            DumpKeychain.self, History.self, Import.self, Export.self, Lock.self, Unlock.self, SetPasscode.self, KeyValueCommand.self, SecretServiceCommand.self,
        ])

    /// Creates the root command (the verbs do the work).
    public init() {}

    /// Runs the tool with `arguments` (without the program name) and returns the exit code.
    /// Errors are written to stderr as one line.
    public static func run(arguments: [String]) -> Int32 {
        do {
            if try FastPath.run(arguments) { return ExitStatus.success }
            var command = try parseAsRoot(ArgumentEscaping.escape(arguments))
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

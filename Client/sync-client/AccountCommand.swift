import ArgumentParser
import SyncClient

struct AccountCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "account", abstract: "Account settings.", subcommands: [RequireApprovalCommand.self])
}

struct RequireApprovalCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "require-approval",
        abstract: "Whether new devices need an enrolled device's approval (on: the password alone opens nothing).")

    enum Setting: String, ExpressibleByArgument, CaseIterable {
        case on, off
    }

    @OptionGroup var keychain: KeychainOptions
    @Argument(help: "on or off.") var setting: Setting
    @Option(help: "A file whose first line is the password (default: $SYNC_PASSWORD, else a prompt).") var passwordFile: String?

    func run() async throws {
        let logger = makeLogger("sync-client")
        try await runReportingErrors {
            let password = try PasswordInput.read(environment: "SYNC_PASSWORD", file: passwordFile, prompt: "Account password: ")
            try await ClientSession.with(keychainPath: keychain.path, logger: logger) { session in
                try await AccountAdministration(session: session).setApprovalRequired(setting == .on, password: password)
            }
            switch setting {
            case .on: print("approval required: new devices enrol with --request-approval, or with the recovery key")
            case .off: print("approval no longer required: the password enrols new devices")
            }
        }
    }
}

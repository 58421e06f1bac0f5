import ArgumentParser
import Foundation
import SyncClient

#if canImport(Glibc)
import Glibc
#endif

struct ApproveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "approve",
        abstract: "List devices asking to join the account, or approve one whose code you compared.",
        discussion: """
            Without arguments, lists open requests: ID, device name, device ID and the code. The new \
            device prints its code; approve only when both show the same one.
            """)

    @OptionGroup var keychain: KeychainOptions
    @Argument(help: "The request to approve.") var request: String?
    @Option(help: "The code the new device shows.") var code: String?

    func run() async throws {
        let logger = makeLogger("sync-client")
        try await runReportingErrors {
            if let request {
                guard let code else { throw SyncClientError(.invalidInput, "give the code the new device shows: --code CODE") }
                try await ClientSession.with(keychainPath: keychain.path, logger: logger) { session in
                    try await DeviceApprovals(session: session).approve(request, code: code)
                }
                print("approved request \(TerminalText.sanitized(request))")
                return
            }
            let pending = try await ClientSession.with(keychainPath: keychain.path, logger: logger) { session in
                try await DeviceApprovals(session: session).pending()
            }
            if pending.isEmpty { print("no device is asking to join") }
            for entry in pending {
                let name = TerminalText.sanitized(entry.name ?? "(malformed request)")
                print("\(TerminalText.sanitized(entry.id))\t\(name)\t\(entry.device)\t\(entry.code.map { "\($0)" } ?? "-")")
            }
        }
    }
}

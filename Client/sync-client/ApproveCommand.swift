import ArgumentParser
import Foundation
import SyncClient

#if canImport(Glibc)
import Glibc
#endif

struct ApproveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "approve",
        abstract: "List devices asking to join the account, or approve one after comparing its code.",
        discussion: """
            Without arguments, lists open requests: ID, device name, device ID and state. With a \
            request ID, takes part in the approval: once the new device has answered, both devices \
            show the same code; approve only when they do (answer y here and on the new device).
            """)

    @OptionGroup var keychain: KeychainOptions
    @Argument(help: "The request to approve.") var request: String?
    @Option(help: .hidden) var code: String?
    @Option(help: "How long to wait for the new device, in seconds.") var timeout: Int = 600

    func run() async throws {
        let logger = makeLogger("sync-client")
        try await runReportingErrors {
            if let request {
                guard code == nil else {
                    throw SyncClientError(
                        .invalidInput,
                        "--code is gone: the code exists once both devices took part; run `sync-client approve \(request)` and confirm the code it shows")
                }
                try await ClientSession.with(keychainPath: keychain.path, logger: logger) { session in
                    var approvals = DeviceApprovals(session: session)
                    approvals.timeout = .seconds(max(1, timeout))
                    try await approvals.approve(
                        request,
                        waiting: { FileHandle.standardError.write(Data("waiting for the new device to answer…\n".utf8)) },
                        confirm: { code in await CodeConfirmation.ask(code, otherDevice: "the new device") })
                }
                print("approved request \(TerminalText.sanitized(request))")
                return
            }
            let pending = try await ClientSession.with(keychainPath: keychain.path, logger: logger) { session in
                try await DeviceApprovals(session: session).pending()
            }
            if pending.isEmpty { print("no device is asking to join") }
            for entry in pending {
                let name = TerminalText.sanitized(entry.name ?? "-")
                let state = entry.problem ?? (entry.isOffered ? "being approved" : "waiting")
                print("\(TerminalText.sanitized(entry.id))\t\(name)\t\(entry.device)\t\(state)")
            }
        }
    }
}

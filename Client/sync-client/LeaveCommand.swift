import ArgumentParser
import SyncClient

struct LeaveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "leave",
        abstract: "Sign this device out of the account: it revokes itself and forgets the account.",
        discussion: """
            The device's revocation is signed into the device log; the server refuses its token and \
            its ID from then on. The account's items on this keychain are removed too, unless \
            --keep-local keeps them here. Nothing changes on the other devices but the device list. \
            Stop `sync-client run` first.
            """)

    @OptionGroup var keychain: KeychainOptions
    @Flag(help: "Keep the account's items on this keychain.") var keepLocal = false

    func run() async throws {
        let logger = makeLogger("sync-client")
        try await runReportingErrors {
            guard ClientStateDatabase.exists(forKeychain: keychain.path) else {
                throw SyncClientError(.notEnrolled, "this keychain is not enrolled; there is no account to leave")
            }
            let lock = try StateLock.acquire(keychainPath: keychain.path)
            defer { lock.release() }
            var departure = DeviceDeparture(keychainPath: keychain.path)
            departure.keepLocal = keepLocal
            let report = try await departure.leave(logger: logger)
            print("left the account: device \(report.device) revoked", terminator: "")
            print(keepLocal ? "; the account's items stay on this keychain" : "; \(report.removedItems) of the account's items removed from this keychain")
        }
    }
}

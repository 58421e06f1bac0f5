import ArgumentParser
import Foundation
import KeychainCrypto
import KeychainStore
import Logging
import SyncClient
import SyncCore

#if canImport(Glibc)
import Glibc
#endif

struct KeychainOptions: ParsableArguments {
    @Option(help: "The keychain file (default: $KEYCHAIN_PATH, else the per-user data directory).")
    var keychain: String?

    var path: String { keychain ?? KeychainLocation.defaultPath() }
}

/// Runs a command body, printing a failure on one stderr line with exit status 1.
func runReportingErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as SyncClientError {
        FileHandle.standardError.write(Data("sync-client: \(error.message)\n".utf8))
        throw ExitCode(1)
    }
}

func makeLogger(_ label: String) -> Logger {
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .notice
        return TerminalSafeLogHandler(wrapping: handler)
    }
    return Logger(label: label)
}

struct EnrollCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "enroll", abstract: "Enrol this device (and with --create, create the account).")

    @OptionGroup var keychain: KeychainOptions
    @Option(help: "The server's URL, https://host:port.") var server: String
    @Option(help: "The account name.") var account: String
    @Flag(help: "Create the account (prints its recovery key once; its password is typed twice on a terminal and must not be among the weakest).") var create = false
    @Option(help: "The server's public-key pin, sha256/BASE64 (default: trust on first use).") var pin: String?
    @Option(help: "A file whose first line is the password (default: $SYNC_PASSWORD, else a prompt).") var passwordFile: String?
    @Option(help: "This device's name on the server (default: the host name).") var deviceName: String?
    @Flag(help: "Allow a plain http:// server (tests only: no TLS, no pin).") var insecureHttp = false
    @Option(help: "log2 of scrypt's N for a new account (default 17, floor 15).") var kdfLogN: UInt8 = 17
    @Option(help: "Open the account keys with the recovery key instead of the password's wrap (after `recover` on an account that revoked a device).")
    var recoveryKey: String?
    @Flag(help: "Ask an enrolled device to approve this one: prints a request ID for `sync-client approve`, then a code to compare and confirm on both devices.")
    var requestApproval = false
    @Option(name: [.customLong("timeout"), .customLong("approval-timeout")],
            help: "How long to wait for an approval, in seconds (the server keeps a request 600).") var approvalTimeout: Int = 600
    @Flag(help: "Enrol a keychain that is enrolled already (a revoked device, one whose keys are gone): its sync state and the sync client's keys go once the new enrolment succeeds; its items stay and are pushed as its own.")
    var replace = false

    func run() async throws {
        let logger = makeLogger("sync-client")
        try await runReportingErrors {
            var pinValue: ServerPin?
            if let pin {
                guard let parsed = ServerPin(pin) else { throw SyncClientError(.invalidInput, "--pin must look like sha256/BASE64") }
                pinValue = parsed
            }
            // A new account's password is typed twice and held to the strength check (decision 0269).
            let password = try create
                ? PasswordInput.readNew(environment: "SYNC_PASSWORD", file: passwordFile, prompt: "New account password: ", account: account)
                : PasswordInput.read(environment: "SYNC_PASSWORD", file: passwordFile, prompt: "Account password: ")
            var enrolment = DeviceEnrolment(
                server: server, account: account, create: create, pin: pinValue, password: password,
                deviceName: deviceName ?? ProcessInfo.processInfo.hostName, allowInsecure: insecureHttp)
            enrolment.logN = kdfLogN
            if let recoveryKey {
                do {
                    enrolment.recoveryKey = try RecoveryKey(printed: recoveryKey)
                } catch {
                    throw SyncClientError(.invalidInput, "that is not a recovery key (check it for typos)", underlying: error)
                }
            }
            if requestApproval {
                enrolment.approval = DeviceEnrolment.Approval(
                    timeout: .seconds(max(1, approvalTimeout)),
                    requested: { id in
                        // Written at once, unbuffered: the user (or a script) reads it while this waits.
                        FileHandle.standardOutput.write(Data("request: \(id)\non an enrolled device, run: sync-client approve \(id)\n".utf8))
                    },
                    confirm: { code in await CodeConfirmation.ask(code, otherDevice: "the approving device") })
            }
            enrolment.replacing = replace
            // Replacing removes the sync state: not under a running daemon.
            let lock = replace ? try StateLock.acquire(keychainPath: keychain.path) : nil
            defer { lock?.release() }
            let (prepared, path) = (enrolment, keychain.path)
            let outcome = try await Interruption.cancelling { try await prepared.run(keychainPath: path, logger: logger) }
            if let pin = outcome.trustedPin {
                print("server pin: \(pin) (trusted on first use; every later connection must match)")
            }
            if let recovery = outcome.recoveryKey {
                print("recovery key (write it down; it is shown only once): \(recovery)")
            }
            print("enrolled device \(outcome.enrolment.device) in account \(outcome.enrolment.account)")
            if create { await publishIdentity(path: path, logger: logger) }
            switch outcome.earlier {
            case .retired(let device)?:
                print("retired this keychain's earlier enrolment, device \(device)")
            case .notRetired(let device, let reason)?:
                print("this keychain's earlier enrolment, device \(device), is still a member (\(reason)): revoke it with `sync-client revoke \(device)`")
            case nil:
                break
            }
        }
    }
}

extension EnrollCommand {
    /// A new account publishes its identity at once (decision 0282), so other people can add it as
    /// a contact; a failure is said, and any later `contacts` command or revocation publishes it.
    private func publishIdentity(path: String, logger: Logger) async {
        do {
            _ = try await ClientSession.with(keychainPath: path, logger: logger) { session in
                try await Contacts(session: session).publishOwnIdentity(readingLog: false)
            }
        } catch {
            FileHandle.standardError.write(Data("sync-client: warning: the account's identity is not published yet (\(error))\n".utf8))
        }
    }
}

struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sync", abstract: "One push/pull round; exits 0 once in step with the server.")

    @OptionGroup var keychain: KeychainOptions

    func run() async throws {
        let logger = makeLogger("sync-client")
        try await runReportingErrors {
            let lock = try StateLock.acquire(keychainPath: keychain.path)
            defer { lock.release() }
            let (report, waiting, unpushed, epochHeld) = try await ClientSession.with(keychainPath: keychain.path, logger: logger) { session in
                let sync = try AccountSync(session: session)
                if isatty(STDERR_FILENO) == 1 {
                    await sync.keychain.setProgressHandler { count in
                        FileHandle.standardError.write(Data("\rapplied \(count) items…".utf8))
                    }
                }
                let report = try await sync.syncUntilInStep()
                return (
                    report, await sync.keychain.waitingForUnlock, await sync.keychain.pushesWaitingForUnlock,
                    await sync.keychain.waitingForAnEpoch
                )
            }
            if waiting > 0 {
                // In step for everything else: these are applied at the first sync after the unlock (decision 0137).
                FileHandle.standardError.write(Data("sync-client: \(waiting) item(s) from other devices wait for the keychain's unlock; see `sync-client status`\n".utf8))
            }
            if unpushed > 0 {
                // Their copies cannot be sealed for the state while locked (decision 0237).
                FileHandle.standardError.write(Data("sync-client: \(unpushed) local change(s) of \"when unlocked\" items wait for the keychain's unlock before they are pushed\n".utf8))
            }
            if report.setAside > 0 {
                // In step for everything else: the set-aside items are per-item problems (decision 0105).
                FileHandle.standardError.write(Data("sync-client: \(report.setAside) item(s) not synced (the server will not take them); see `sync-client status`\n".utf8))
            }
            print("in step: pushed \(report.keychain.pushed), applied \(report.keychain.applied)")
            print("key-value stores in step: \(report.keyValue.stores.count), pushed \(report.keyValue.pushed), applied \(report.keyValue.applied)")
            if epochHeld > 0 {
                // Read the log again and still not shown: the server withholds the epoch (decision 0251).
                throw SyncClientError(
                    .untrustedAccountState,
                    "\(epochHeld) item(s) from other devices are sealed under a key epoch the device log the server serves does not show; held, not applied; see `sync-client status`")
            }
            let unlisted = report.unlisted
            if unlisted > 0 {
                // Everything else is done; the exit status says that the server's state was not
                // taken whole (decision 0106: withheld, lost, or deleted and collected).
                throw SyncClientError(
                    .unlistedItems,
                    "the server no longer lists \(unlisted) item(s) this device has; kept here, not deleted; see `sync-client status`")
            }
        }
    }
}

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "run", abstract: "The daemon: pushes local changes within a second and applies pushes.")

    @OptionGroup var keychain: KeychainOptions
    @Option(help: "How to notice keychain writes: inotify or poll.") var watch: String = "inotify"

    func run() async throws {
        let logger = makeLogger("sync-client")
        try await runReportingErrors {
            guard let mode = JournalWatcher.Mode(rawValue: watch) else { throw SyncClientError(.invalidInput, "--watch must be inotify or poll") }
            let lock = try StateLock.acquire(keychainPath: keychain.path)
            defer { lock.release() }
            let reachability = ServerReachability()
            try await ClientSession.with(
                keychainPath: keychain.path, logger: logger, waitForServer: true, keepsKeychainOpen: true, reachability: reachability
            ) { session in
                var configuration = SyncDaemon.Configuration()
                configuration.watchMode = mode
                let daemon = SyncDaemon(
                    session: session, sync: try AccountSync(session: session), keychainPath: keychain.path, configuration: configuration,
                    reachability: reachability)
                FileHandle.standardOutput.write(Data("sync-client: running for device \(session.enrolment.device)\n".utf8))
                try await daemon.runInServiceGroup(logger: logger)
            }
        }
    }
}

struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Account, server and whether it takes this device's requests, pin, device, last sync, pending changes, problems; exits 1 when the server is unreachable, the device revoked or the account disabled.")

    @OptionGroup var keychain: KeychainOptions
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let logger = makeLogger("sync-client")
        try await runReportingErrors {
            var status = try ClientStatus.read(keychainPath: keychain.path)
            // One request of this device: design §7's status says when the server is unreachable,
            // the device revoked or the account disabled, and exits non-zero then (decision 0261).
            let check = await ServerCheck.run(keychainPath: keychain.path, logger: logger)
            status.connection = check
            print(json ? try status.jsonText() : status.text)
            if let error = check.error { throw error }
        }
    }
}

struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "devices", abstract: "List the account's devices, checked against the device log this device verified.")

    @OptionGroup var keychain: KeychainOptions

    func run() async throws {
        let logger = makeLogger("sync-client")
        try await runReportingErrors {
            let roster = try await ClientSession.with(keychainPath: keychain.path, logger: logger) { session in
                try await AccountAdministration(session: session).roster()
            }
            print(roster.text)
            let unbacked = roster.unbacked.count
            if unbacked > 0 {
                throw SyncClientError(
                    .untrustedAccountState,
                    "the server lists \(unbacked) device\(unbacked == 1 ? "" : "s") that the device log does not back; revoke any you do not know")
            }
        }
    }
}

struct ChangePasswordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "change-password", abstract: "Re-wrap the account key under a new password; other devices keep working.")

    @OptionGroup var keychain: KeychainOptions
    @Option(help: "A file whose first line is the current password (default: $SYNC_PASSWORD, else a prompt).") var passwordFile: String?
    @Option(help: "A file whose first line is the new password (default: $SYNC_NEW_PASSWORD, else a prompt).") var newPasswordFile: String?

    func run() async throws {
        let logger = makeLogger("sync-client")
        try await runReportingErrors {
            let current = try PasswordInput.read(environment: "SYNC_PASSWORD", file: passwordFile, prompt: "Current password: ")
            let new = try PasswordInput.readNew(environment: "SYNC_NEW_PASSWORD", file: newPasswordFile, prompt: "New password: ")
            try await ClientSession.with(keychainPath: keychain.path, logger: logger) { session in
                try await AccountAdministration(session: session).changePassword(current: current, new: new)
            }
            print("password changed")
        }
    }
}

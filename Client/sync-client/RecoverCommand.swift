import ArgumentParser
import Foundation
import KeychainCrypto
import SyncClient

struct RecoverCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recover",
        abstract: "Set a new password with the recovery key printed at account creation; every device keeps working.",
        discussion: """
            On an enrolled device the server, account and pin are the enrolment's. Elsewhere give \
            --server and --account (and --pin, or the server is trusted on first use). On an enrolled \
            device the new password then wraps the newest account key, so new devices enrol with it; \
            elsewhere it wraps the first key epoch's, which after a revocation opens nothing current \
            until `change-password` runs on an enrolled device or a device enrols with --recovery-key. \
            On an account that requires approval, the recovery enrols this device itself.
            """)

    @OptionGroup var keychain: KeychainOptions
    @Option(help: "The server's URL, https://host:port (default: this device's enrolment).") var server: String?
    @Option(help: "The account name (default: this device's enrolment).") var account: String?
    @Option(help: "The server's public-key pin, sha256/BASE64 (default: the enrolment's, else trust on first use).") var pin: String?
    @Option(help: "The recovery key (default: $SYNC_RECOVERY_KEY, else a prompt).") var recoveryKey: String?
    @Option(help: "A file whose first line is the new password (default: $SYNC_NEW_PASSWORD, else a prompt).") var newPasswordFile: String?
    @Option(help: "This device's name, when the recovery enrols it (default: the host name).") var deviceName: String?
    @Flag(help: "Allow a plain http:// server (tests only: no TLS, no pin).") var insecureHttp = false

    func run() async throws {
        try await runReportingErrors {
            let state = ClientStateDatabase.exists(forKeychain: keychain.path)
                ? try ClientStateDatabase(keychainPath: keychain.path, create: false) : nil
            var enrolment = try state?.enrolment()
            if let enrolment, account.map({ $0 != enrolment.account }) ?? false {
                throw SyncClientError(.invalidInput, "this keychain is enrolled in \(enrolment.account); recover it, or use another --keychain")
            }
            guard let serverURL = server ?? enrolment?.server, let accountName = account ?? enrolment?.account else {
                throw SyncClientError(.invalidInput, "this keychain is not enrolled: give --server and --account")
            }
            if server != nil, server != enrolment?.server { enrolment = nil }
            let pinValue = try (pin ?? enrolment?.pin).map { text throws(SyncClientError) in
                guard let parsed = ServerPin(text) else { throw SyncClientError(.invalidInput, "--pin must look like sha256/BASE64") }
                return parsed
            }
            let keyText = try recoveryKey ?? PasswordInput.read(environment: "SYNC_RECOVERY_KEY", file: nil, prompt: "Recovery key: ")
            let key: RecoveryKey
            do {
                key = try RecoveryKey(printed: keyText)
            } catch {
                throw SyncClientError(.invalidInput, "that is not a recovery key (check it for typos)", underlying: error)
            }
            let newPassword = try PasswordInput.readNew(
                environment: "SYNC_NEW_PASSWORD", file: newPasswordFile, prompt: "New password: ", account: accountName)
            var recovery = AccountRecovery(
                server: serverURL, account: accountName, pin: pinValue, recoveryKey: key, newPassword: newPassword,
                allowInsecure: insecureHttp)
            recovery.pinnedKDF = enrolment?.pinnedKDF
            let outcome = try await recovery.run()
            if var enrolment, let state {
                enrolment.pinnedKDF = PinnedKDF(outcome.parameters)
                try state.saveEnrolment(enrolment)
            }
            print("password replaced for \(accountName); enrolled devices keep working")
            if try state?.enrolment() != nil {
                try await bringForward(newPassword, account: accountName)
                return
            }
            guard outcome.requiresApproval else {
                // Nothing here holds a key past epoch 1, which the recovery wraps (decision 0269).
                print("""
                    new devices enrol with the new password, unless a device of \(accountName) was ever revoked: the password then \
                    opens only the first key epoch until `sync-client change-password` runs on an enrolled device, or one new \
                    device enrols with --recovery-key
                    """)
                return
            }
            // The password opens nothing on this account (decision 0134): the recovery key enrols this device.
            var enrolling = DeviceEnrolment(
                server: serverURL, account: accountName, create: false, pin: pinValue, password: newPassword,
                deviceName: deviceName ?? ProcessInfo.processInfo.hostName, allowInsecure: insecureHttp)
            enrolling.recoveryKey = key
            let enrolled = try await enrolling.run(keychainPath: keychain.path, logger: makeLogger("sync-client"))
            print("enrolled device \(enrolled.enrolment.device) in account \(enrolled.enrolment.account) with the recovery key")
        }
    }

    /// The recovery wrapped epoch 1's key under the new password; this enrolled device wraps the
    /// newest it holds, so that new devices enrol with the password after a revocation too.
    private func bringForward(_ password: String, account: String) async throws {
        do {
            let epoch = try await ClientSession.with(keychainPath: keychain.path, logger: makeLogger("sync-client")) { session in
                try await AccountAdministration(session: session).wrapNewestEpoch(password: password)
            }
            print("new devices enrol with the new password (it wraps the account key of epoch \(epoch), the newest)")
        } catch let error as SyncClientError {
            FileHandle.standardError.write(Data(("sync-client: warning: the new password opens only the first key epoch, which is "
                + "enough unless a device of \(account) was ever revoked; this device could not bring it forward (\(error.message)): "
                + "run `sync-client change-password` on an enrolled device, or enrol the next device with --recovery-key\n").utf8))
        }
    }
}

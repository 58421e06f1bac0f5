import ArgumentParser
import Foundation
import SyncClient
import SyncCore

/// `sync-client revoke DEVICE`: DEVICE is an ID or a name (decision 0264); a name several devices
/// share is refused, and so is this device, which `sync-client leave` signs out.
struct RevokeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke",
        abstract: "Revoke a device: signed into the device log, its token stops working, and a new account key (epoch) seals everything written from now on.")

    @OptionGroup var keychain: KeychainOptions
    @Argument(help: "The device: its ID, or its name as `sync-client devices` lists it (a name two devices share is refused).")
    var device: String
    @Option(help: "A file whose first line is the account's current password (default: $SYNC_PASSWORD, else a prompt).")
    var passwordFile: String?
    @Option(help: "A file whose first line is the new password, which the new epoch's key is wrapped under (default: $SYNC_NEW_PASSWORD, else a prompt).")
    var newPasswordFile: String?
    @Flag(help: "Keep the current password (the revoked device's holder, if they know it, can still open what is written from now on).")
    var keepPassword = false

    func run() async throws {
        let logger = makeLogger("sync-client")
        try await runReportingErrors {
            let (id, name, change) = try await ClientSession.with(keychainPath: keychain.path, logger: logger) { session in
                let administration = AccountAdministration(session: session)
                let own = session.enrolment.device
                // This device's own ID is refused before anything is asked of the server.
                if let id = DeviceID(device) { try DeviceSelector.refuseOwn(id, own: own, shown: device) }
                let devices = try await administration.devices()
                let id = try DeviceSelector.select(device, among: devices, own: own)
                // Asked only once the device is known: a refused name asks nothing.
                let password = try PasswordInput.read(environment: "SYNC_PASSWORD", file: passwordFile, prompt: "Current password: ")
                let newPassword = try readNewPassword(current: password)
                let change = try await administration.revoke(id, password: password, newPassword: newPassword)
                // The account's identity moves with the epoch (decision 0282): contacts are served
                // the new card, which the revoked device cannot sign for, and verify it again.
                do {
                    try await Contacts(session: session).publishOwnIdentity(readingLog: false)
                } catch {
                    FileHandle.standardError.write(Data(("sync-client: warning: the account's new identity is not published yet (\(error)); "
                        + "`sync-client contacts add` publishes it\n").utf8))
                }
                return (id, devices.first { $0.id == id }?.name, change)
            }
            print("revoked \(id)\(name.map { " (\(TerminalText.sanitized($0)))" } ?? "")")
            print("key epoch \(change.epoch)\(change.madeHere ? ": a new account key, sealed to the remaining devices" : "")")
            if change.passwordChanged {
                print("password changed: the old one no longer signs in or opens the account key; the other devices keep working")
            } else {
                FileHandle.standardError.write(Data(("sync-client: warning: the password is unchanged: whoever holds the revoked device "
                    + "and knows it can still sign in and, unless the account requires approval, open the key of epoch \(change.epoch); "
                    + "change it with `sync-client change-password`\n").utf8))
            }
            // What revocation cannot take back (decision 0272).
            print("""
                the revoked device's holder keeps what it had synced, and its old key opens any item not written since, \
                should the server hand it out; what is written from now on is sealed under epoch \(change.epoch)
                """)
            if change.repairedWraps > 0 {
                let recipients = "\(change.repairedWraps) recipient\(change.repairedWraps == 1 ? "" : "s")"
                print("key epoch \(change.epoch): sealed to the \(recipients) its entries had missed")
            }
            for device in change.unreachable {
                FileHandle.standardError.write(Data("sync-client: warning: device \(device) has no key-agreement key in the device log: it cannot read what is written from now on; enrol it again\n".utf8))
            }
            if change.madeHere && !change.sealedToRecovery {
                // Decision 0178: an account created before the recovery key had a public half.
                FileHandle.standardError.write(Data(("sync-client: warning: this account's recovery key has no public key in the device log "
                    + "(made before decision 0178): it opens only the account key of epoch 1, so with it alone items written from now on "
                    + "cannot be recovered; keep a second device, or enrol one by approval\n").utf8))
            }
        }
    }

    /// The new password, unless `--keep-password`; the current one again is refused (decision 0272).
    private func readNewPassword(current: String) throws -> String? {
        guard !keepPassword else { return nil }
        let new = try PasswordInput.readNew(
            environment: "SYNC_NEW_PASSWORD", file: newPasswordFile,
            prompt: "New password (the revoked device's holder may know the current one): ")
        guard new != current else {
            throw SyncClientError(.invalidInput, "the new password is the current one; give another, or --keep-password to keep it")
        }
        return new
    }
}

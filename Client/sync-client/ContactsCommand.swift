import ArgumentParser
import Foundation
import KeychainCrypto
import SyncClient

/// `sync-client contacts`: the other accounts this device trusts to share with (decision 0282).
struct ContactsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "contacts", abstract: "Other accounts you share with, each verified once by a safety code.",
        subcommands: [ContactsAddCommand.self, ContactsListCommand.self, ContactsCheckCommand.self])
}

struct ContactsAddCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Fetch another account's identity, compare the safety code with its owner once, and pin it.")

    @OptionGroup var keychain: KeychainOptions
    @Argument(help: "The other account's name on the server.") var account: String

    func run() async throws {
        let logger = makeLogger("sync-client")
        try await runReportingErrors {
            let shown = TerminalText.sanitized(account)
            try await ClientSession.with(keychainPath: keychain.path, logger: logger) { session in
                let contacts = Contacts(session: session)
                let lookup = try await contacts.lookUp(account)
                switch lookup.standing {
                case .pinned:
                    print("\(shown): verified before, identity unchanged")
                    return
                case .changed:
                    FileHandle.standardError.write(Data(("sync-client: \(shown)'s identity is not the one you verified: a new key epoch of "
                        + "that account (it revoked a device), or the server handing you a key of its own; compare the safety code again\n").utf8))
                case .new:
                    break
                }
                guard await CodeConfirmation.ask(lookup.code, contact: shown) else {
                    throw SyncClientError(.invalidInput, "not confirmed: \(shown) is not pinned (run this again once you have compared the code)")
                }
                try contacts.pin(lookup)
                print("\(shown): verified and pinned")
            }
        }
    }
}

struct ContactsListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "The contacts this device verified.")

    @OptionGroup var keychain: KeychainOptions

    func run() async throws {
        let logger = makeLogger("sync-client")
        try await runReportingErrors {
            let pinned = try await ClientSession.with(keychainPath: keychain.path, logger: logger) { session in
                try Contacts(session: session).pinnedContacts()
            }
            if pinned.isEmpty { print("no contacts yet: `sync-client contacts add ACCOUNT`") }
            for contact in pinned {
                let fingerprint = Array(contact.card.fingerprint.prefix(8)).hexString
                let verified = contact.verifiedAt.formatted(.iso8601)
                print("\(TerminalText.sanitized(contact.card.account))\tfingerprint \(fingerprint)\tverified \(verified)")
            }
        }
    }
}

struct ContactsCheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check", abstract: "Whether the server still serves the identity you verified for a contact (exit 1 if not).")

    @OptionGroup var keychain: KeychainOptions
    @Argument(help: "The contact's account name.") var account: String

    func run() async throws {
        let logger = makeLogger("sync-client")
        try await runReportingErrors {
            try await ClientSession.with(keychainPath: keychain.path, logger: logger) { session in
                _ = try await Contacts(session: session).verifiedCard(of: account)
            }
            print("\(TerminalText.sanitized(account)): the identity you verified")
        }
    }
}

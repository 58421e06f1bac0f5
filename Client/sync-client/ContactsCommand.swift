import ArgumentParser
import Foundation
import KeychainCrypto
import SyncClient

/// `sync-client contacts`: the other accounts this device trusts to share with (decision 0282).
struct ContactsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "contacts", abstract: "Other accounts you share with, each verified once by a safety code.",
        subcommands: [ContactsAddCommand.self, ContactsListCommand.self, ContactsVerifyCommand.self])

    /// Looks `account` up on the device of `keychain` and hands the result, with the name as
    /// printed, to `body`.
    static func lookUp(
        _ account: String, keychain: KeychainOptions, _ body: @escaping @Sendable (Contacts.Lookup, Contacts, String) async throws -> Void
    ) async throws {
        let logger = makeLogger("sync-client")
        try await runReportingErrors {
            let shown = TerminalText.sanitized(account)
            try await ClientSession.with(keychainPath: keychain.path, logger: logger) { session in
                let contacts = Contacts(session: session)
                try await body(try await contacts.lookUp(account), contacts, shown)
            }
        }
    }

    /// Shows the safety code and pins the card once the person confirms it.
    static func confirm(_ lookup: Contacts.Lookup, contacts: Contacts, shown: String) async throws {
        guard await CodeConfirmation.ask(lookup.code, contact: shown) else {
            throw SyncClientError(.invalidInput, "not confirmed: \(shown) is not pinned (run this again once you have compared the code)")
        }
        try contacts.pin(lookup)
        print("\(shown): verified and pinned")
    }
}

struct ContactsAddCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Fetch another account's identity, compare the safety code with its owner once, and pin it.")

    @OptionGroup var keychain: KeychainOptions
    @Argument(help: "The other account's name on the server.") var account: String

    func run() async throws {
        try await ContactsCommand.lookUp(account, keychain: keychain) { lookup, contacts, shown in
            switch lookup.standing {
            case .pinned:
                print("\(shown): verified before, identity unchanged")
            case .changed:
                throw SyncClientError(
                    .untrustedAccountState,
                    "\(shown)'s identity is not the one you verified; `sync-client contacts verify \(shown)` compares the safety code again")
            case .new:
                try await ContactsCommand.confirm(lookup, contacts: contacts, shown: shown)
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

struct ContactsVerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Whether the server still serves the identity you verified for a contact; if not, compare the safety code again (exit 1 unless confirmed).")

    @OptionGroup var keychain: KeychainOptions
    @Argument(help: "The contact's account name.") var account: String

    func run() async throws {
        try await ContactsCommand.lookUp(account, keychain: keychain) { lookup, contacts, shown in
            switch lookup.standing {
            case .pinned:
                print("\(shown): the identity you verified")
            case .changed:
                FileHandle.standardError.write(Data(("sync-client: \(shown)'s identity is not the one you verified: a new key epoch of "
                    + "that account (it revoked a device), or the server handing you a key of its own; compare the safety code again\n").utf8))
                try await ContactsCommand.confirm(lookup, contacts: contacts, shown: shown)
            case .new:
                throw SyncClientError(.invalidInput, "\(shown) is not a contact yet; `sync-client contacts add \(shown)` compares the safety code")
            }
        }
    }
}

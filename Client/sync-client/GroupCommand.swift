import ArgumentParser
import Foundation
import KeychainCrypto
import SyncClient

/// `sync-client group`: shared password groups' membership (decision 0283) and the values their
/// members share (decision 0292). Keychain items in groups are not built yet.
struct GroupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "group", abstract: "Groups of accounts that share passwords: who is in them, and the values they share.",
        subcommands: [
            GroupCreateCommand.self, GroupInviteCommand.self, GroupAcceptCommand.self, GroupMembersCommand.self,
            GroupRoleCommand.self, GroupRemoveCommand.self, GroupUpdateCommand.self, GroupLeaveCommand.self, GroupListCommand.self,
            GroupSetCommand.self, GroupGetCommand.self, GroupValuesCommand.self,
        ])

    /// Runs `body` with the groups of the device of `keychain`, reporting a failure on one line.
    static func with(_ keychain: KeychainOptions, _ body: @escaping @Sendable (Groups) async throws -> Void) async throws {
        let logger = makeLogger("sync-client")
        try await runReportingErrors {
            try await ClientSession.with(keychainPath: keychain.path, logger: logger) { session in
                try await body(Groups(session: session))
            }
        }
    }

    /// The members of `log`, one a line: name, role, and the fingerprint of the card the log holds.
    static func printMembers(of log: GroupLog) {
        for (name, member) in log.members.sorted(by: { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }) {
            print("\(TerminalText.sanitized(name))\t\(member.role)\tfingerprint \(Array(member.card.fingerprint.prefix(8)).hexString)")
        }
    }
}

extension GroupLogEntry.Role: ExpressibleByArgument, CustomStringConvertible {
    public init?(argument: String) {
        switch argument {
        case "admin": self = .admin
        case "member": self = .member
        case "viewer": self = .viewer
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case .owner: "owner"
        case .admin: "admin"
        case .member: "member"
        case .viewer: "viewer"
        }
    }
}

struct GroupCreateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "create", abstract: "Create a group this account owns.")

    @OptionGroup var keychain: KeychainOptions
    @Argument(help: "This account's name for the group.") var name: String

    func run() async throws {
        try await GroupCommand.with(keychain) { groups in
            let group = try await groups.create(name)
            print("\(TerminalText.sanitized(group.name)): created, owned by \(TerminalText.sanitized(group.owner))")
        }
    }
}

struct GroupInviteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "invite", abstract: "Add a verified contact to a group (its devices accept with `sync-client group accept`).")

    @OptionGroup var keychain: KeychainOptions
    @Argument(help: "The group.") var name: String
    @Argument(help: "The contact's account name.") var contact: String
    @Option(help: "admin, member (reads and writes) or viewer (reads).") var role: GroupLogEntry.Role = .member

    func run() async throws {
        try await GroupCommand.with(keychain) { groups in
            _ = try await groups.invite(contact, to: name, role: role)
            print("\(TerminalText.sanitized(contact)): added to \(TerminalText.sanitized(name)) as \(role)")
        }
    }
}

struct GroupAcceptCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accept", abstract: "Accept the groups verified contacts added this account to (each asked in turn).")

    @OptionGroup var keychain: KeychainOptions
    @Option(help: "The name to give the group (when one invitation is pending).") var name: String?
    @Flag(help: "Accept without asking.") var yes = false

    func run() async throws {
        try await GroupCommand.with(keychain) { groups in
            let (invitations, unverifiable) = try await groups.invitations()
            for owner in unverifiable {
                FileHandle.standardError.write(Data(
                    "sync-client: a group from \(TerminalText.sanitized(owner)) does not verify against a verified contact; not offered\n".utf8))
            }
            if invitations.isEmpty { print("no invitations") }
            if name != nil, invitations.count > 1 { throw SyncClientError(.invalidInput, "--name names one group; \(invitations.count) are pending") }
            for invitation in invitations {
                let shown = TerminalText.sanitized(invitation.owner)
                print("\(shown) added this account to a group; its members:")
                GroupCommand.printMembers(of: invitation.log)
                let named = name ?? invitation.suggestedName
                let accepted = if yes { true } else { await Confirmation.ask("Accept it as \(TerminalText.sanitized(named))?") }
                guard accepted else {
                    print("not accepted")
                    continue
                }
                let group = try groups.accept(invitation, as: named)
                print("\(TerminalText.sanitized(group.name)): accepted")
            }
        }
    }
}

struct GroupMembersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "members", abstract: "A group's members, as its verified log shows them.")

    @OptionGroup var keychain: KeychainOptions
    @Argument(help: "The group.") var name: String

    func run() async throws {
        try await GroupCommand.with(keychain) { groups in
            let group = try await groups.group(named: name)
            let log = group.log
            print("key epoch \(log.epoch): \(groups.holdsCurrentKey(group) ? "this account holds its key" : "this account does not hold its key")")
            GroupCommand.printMembers(of: log)
            if !log.members.keys.contains(groups.account) {
                FileHandle.standardError.write(Data("sync-client: this account is no longer a member of \(TerminalText.sanitized(name))\n".utf8))
            }
        }
    }
}

struct GroupRoleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "role", abstract: "Give a member another role (the owner only); a member made a viewer writes nothing under the new group key that follows.")

    @OptionGroup var keychain: KeychainOptions
    @Argument(help: "The group.") var name: String
    @Argument(help: "The member's account name.") var member: String
    @Argument(help: "admin, member (reads and writes) or viewer (reads).") var role: GroupLogEntry.Role

    func run() async throws {
        try await GroupCommand.with(keychain) { groups in
            let group = try await groups.changeRole(of: member, to: role, in: name)
            print("\(TerminalText.sanitized(member)): \(role) in \(TerminalText.sanitized(name)); key epoch \(group.log.epoch)")
        }
    }
}

struct GroupRemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Remove a member: a new group key, which the removed account cannot open.")

    @OptionGroup var keychain: KeychainOptions
    @Argument(help: "The group.") var name: String
    @Argument(help: "The member's account name.") var member: String

    func run() async throws {
        try await GroupCommand.with(keychain) { groups in
            let group = try await groups.remove(member, from: name)
            print("\(TerminalText.sanitized(member)): removed from \(TerminalText.sanitized(name)); key epoch \(group.log.epoch)")
        }
    }
}

struct GroupUpdateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update",
        abstract: "Record a member's new identity (its account revoked a device; verify it first with `contacts verify`) and re-key the group.")

    @OptionGroup var keychain: KeychainOptions
    @Argument(help: "The group.") var name: String
    @Argument(help: "The member's account name.") var member: String

    func run() async throws {
        try await GroupCommand.with(keychain) { groups in
            let group = try await groups.update(member, in: name)
            print("\(TerminalText.sanitized(member)): identity updated in \(TerminalText.sanitized(name)); key epoch \(group.log.epoch)")
        }
    }
}

struct GroupLeaveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "leave",
        abstract: "Leave a group: its items and values leave this account's devices (move out first what you want to keep: `keychain move --from GROUP --private`).")

    @OptionGroup var keychain: KeychainOptions
    @Argument(help: "The group.") var name: String

    func run() async throws {
        try await GroupCommand.with(keychain) { groups in
            try await groups.leave(name)
            print("\(TerminalText.sanitized(name)): left; its items and values are gone from this device, and from the account's other devices at their next sync")
        }
    }
}

struct GroupListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "The groups this account created or accepted; after a tab, `reads only` for a group it views, `no longer a member` for one it was removed from.")

    @OptionGroup var keychain: KeychainOptions

    func run() async throws {
        try await GroupCommand.with(keychain) { groups in
            let recorded = try groups.recorded()
            if recorded.isEmpty { print("no groups yet: `sync-client group create NAME`, or `sync-client group accept`") }
            for (name, standing) in recorded {
                let status = switch standing {
                case .writes: ""
                case .reads: "\treads only"
                case .departed: "\tno longer a member"
                }
                print(TerminalText.sanitized(name) + status)
            }
        }
    }
}

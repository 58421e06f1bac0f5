import ArgumentParser
import Foundation
import SyncServer

/// `sync-server admin …`: accounts and devices as the operator sees them, and disabling an account
/// (decision 0152). Runs beside running servers, on the same `--data-dir` or `--database`.
struct AdminCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin", abstract: "List accounts and devices; disable or enable an account.",
        subcommands: [Accounts.self, Devices.self, Disable.self, Enable.self])

    struct Accounts: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every account: devices, items, bytes, last seen.")
        @OptionGroup var storage: StorageOptions

        func run() async throws {
            let summaries = try await storage.withStorage { try await $0.accountSummaries() }
            print(["ACCOUNT", "DEVICES", "ITEMS", "BYTES", "LAST-SEEN", "STATE"].joined(separator: "\t"))
            for account in summaries {
                print([
                    // A shared group's zones are stored under a hidden account (decision 0290).
                    GroupZones.group(ofAccountNamed: account.name).map { "(group \($0))" } ?? account.name, "\(account.devices)", "\(account.items)", "\(account.bytes)",
                    account.lastSeen.map(Self.format) ?? "never", account.isDisabled ? "disabled" : "active",
                ].joined(separator: "\t"))
            }
        }

        static func format(_ date: Date) -> String { date.formatted(.iso8601) }
    }

    struct Devices: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The devices of ACCOUNT, revoked ones included.")
        @OptionGroup var storage: StorageOptions
        @Argument(help: "The account name.") var account: String

        func run() async throws {
            let devices = try await storage.withStorage { storage in
                guard let record = try await storage.account(named: account) else { throw OperatorError("no account named \(account)") }
                return try await storage.devices(of: record.id)
            }
            print(["DEVICE", "NAME", "CREATED", "LAST-SEEN", "STATE"].joined(separator: "\t"))
            for device in devices {
                print([
                    device.id.rawValue, device.name, Accounts.format(device.createdAt), Accounts.format(device.lastSeenAt),
                    device.revokedAt.map { "revoked \(Accounts.format($0))" } ?? "active",
                ].joined(separator: "\t"))
            }
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Disable ACCOUNT: its tokens stop working at once on every server process; nothing is deleted.")
        @OptionGroup var storage: StorageOptions
        @Argument(help: "The account name.") var account: String

        func run() async throws {
            try await storage.setDisabled(true, account: account)
            print("disabled \(account)")
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable ACCOUNT again.")
        @OptionGroup var storage: StorageOptions
        @Argument(help: "The account name.") var account: String

        func run() async throws {
            try await storage.setDisabled(false, account: account)
            print("enabled \(account)")
        }
    }
}

extension StorageOptions {
    /// Opens the storage, runs what it needs running (PostgreSQL's pool) around `body`, and stops it.
    func withStorage<T: Sendable>(_ body: @escaping @Sendable (any ServerStorage) async throws -> T) async throws -> T {
        try requireExistingDatabase()
        let storage = try await location.open()
        return try await withThrowingTaskGroup(of: T?.self) { group in
            for service in storage.services {
                group.addTask {
                    try await service.run()
                    return nil
                }
            }
            group.addTask { try await body(storage) }
            while let next = try await group.next() {
                if let result = next {
                    group.cancelAll()
                    return result
                }
            }
            throw ValidationError("the storage stopped")
        }
    }

    func setDisabled(_ disabled: Bool, account: String) async throws {
        try await withStorage { storage in
            guard let record = try await storage.account(named: account) else { throw OperatorError("no account named \(account)") }
            try await storage.setDisabled(disabled, account: record.id)
        }
    }
}

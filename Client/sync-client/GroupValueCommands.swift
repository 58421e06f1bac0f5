import ArgumentParser
import Foundation
import SyncClient

/// `sync-client group set|get|values`: the values a group's members share (decision 0292), each
/// command on a group brought in step with the server first.
struct GroupSetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "Set a text value the group's members share, and sync the group.")

    @OptionGroup var keychain: KeychainOptions
    @Argument(help: "The group.") var name: String
    @Argument(help: "The value's key.") var key: String
    @Argument(help: "The value; read from standard input (one line) when left out, so it stays out of process listings.")
    var value: String?

    func run() async throws {
        try await GroupCommand.with(keychain) { groups in
            guard let text = value ?? readLine(strippingNewline: true) else {
                throw SyncClientError(.invalidInput, "no value given and standard input ended")
            }
            try await GroupValues(groups: groups).set(text, forKey: key, in: try await groups.group(named: name))
            print("\(TerminalText.sanitized(name)): \(TerminalText.sanitized(key)) set and synced")
        }
    }
}

struct GroupGetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Print a value the group's members share, after syncing the group.")

    @OptionGroup var keychain: KeychainOptions
    @Argument(help: "The group.") var name: String
    @Argument(help: "The value's key.") var key: String
    @Flag(help: "Print this device's copy, as the last sync left it, without syncing the group.") var offline = false

    func run() async throws {
        try await GroupCommand.with(keychain) { groups in
            let group = try await groups.group(named: name)
            guard let text = try await GroupValues(groups: groups).text(forKey: key, in: group, syncing: !offline) else {
                throw SyncClientError(.invalidInput, "the group \(name) has no text value \(key)")
            }
            print(text)
        }
    }
}

struct GroupValuesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "values", abstract: "List the keys of the values the group's members share, after syncing the group.")

    @OptionGroup var keychain: KeychainOptions
    @Argument(help: "The group.") var name: String

    func run() async throws {
        try await GroupCommand.with(keychain) { groups in
            for key in try await GroupValues(groups: groups).keys(in: try await groups.group(named: name)) {
                print(TerminalText.sanitized(key))
            }
        }
    }
}

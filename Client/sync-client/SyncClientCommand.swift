import ArgumentParser
import Foundation
import Logging
import SyncClient

@main
struct SyncClientCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-client",
        abstract: "Syncs the local keychain's synchronizable items with a sync server, end-to-end encrypted.",
        subcommands: [
            EnrollCommand.self, SyncCommand.self, RunCommand.self, StatusCommand.self, DevicesCommand.self,
            RevokeCommand.self, ChangePasswordCommand.self, RecoverCommand.self, ApproveCommand.self, AccountCommand.self, LeaveCommand.self, ContactsCommand.self,
            GroupCommand.self,
        ])
}

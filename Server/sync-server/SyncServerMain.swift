import ArgumentParser

/// `sync-server`: serves by default; `admin`, `backup` and `restore` operate on the same storage.
@main
struct SyncServerMain: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-server",
        abstract: "The SyncKeychain sync server: end-to-end-encrypted item blobs, change feed and push.",
        subcommands: [SyncServerCommand.self, AdminCommand.self, BackupCommand.self, RestoreCommand.self],
        defaultSubcommand: SyncServerCommand.self)
}

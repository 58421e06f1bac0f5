import ArgumentParser
import Foundation
import SyncServer

/// `sync-server`: serves by default; `admin`, `backup` and `restore` operate on the same storage.
@main
struct SyncServerMain: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-server",
        abstract: "The SyncKeychain sync server: end-to-end-encrypted item blobs, change feed and push.",
        subcommands: [SyncServerCommand.self, AdminCommand.self, BackupCommand.self, RestoreCommand.self],
        defaultSubcommand: SyncServerCommand.self)

    /// Runs the command. The one place that turns an error into what the operator sees: the
    /// server's and the operator commands' own errors are one line on stderr, `sync-server:
    /// MESSAGE`, exit status 1; usage errors and help are the parser's.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let error as OperatorError {
            fail(error.message)
        } catch let error as SyncServerError {
            fail(error.message)
        } catch {
            exit(withError: error)
        }
    }

    private static func fail(_ message: String) -> Never {
        let line = message.map { $0.isNewline ? " " : $0 }
        FileHandle.standardError.write(Data("sync-server: \(String(line))\n".utf8))
        Foundation.exit(1)
    }
}

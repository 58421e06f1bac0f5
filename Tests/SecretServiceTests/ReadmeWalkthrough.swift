import Foundation
import ProcessTesting
import Testing

/// README's walkthrough as it runs: two machines, the server, the account's passwords, what the
/// commands printed so far, and how each README command is run (``Rule``).
final class ReadmeWalkthrough {
    /// README's server address; every command and output gets the test server's instead.
    static let readmeServer = "https://127.0.0.1:8443"
    /// README's install directory; the test installs into a directory of its own instead (no root, no trace left).
    static let readmeBin = "/usr/local/bin"

    let directory: URL
    /// `/usr/local/bin` of the walkthrough.
    let bin: URL
    let a: WalkthroughMachine
    let b: WalkthroughMachine
    var server: TestServer?
    var output = ReadmeOutput()
    /// The account password, and the one a command that sets a new password sets.
    var password = "correct horse battery staple"
    var newPassword = "tangerine ladder quietly hums"
    /// What the terminal shows and a person types at it: a password typed for a new item, and the
    /// secret given to `secret-tool store`.
    let typedItemPassword = "typed-at-the-terminal"
    let storedSecret = "stored-by-secret-tool"

    /// `text` without the account's passwords and recovery key, for a failure's message.
    func masked(_ text: String) -> String {
        [password, newPassword, output.captured["recoveryKey"]].compactMap { $0 }.reduce(text) {
            $0.replacingOccurrences(of: $1, with: "…")
        }
    }

    /// After a command that set ``newPassword``: it is the password, and the next new one another.
    func changedPassword() {
        password = newPassword
        newPassword = "mossy harbour \(newPassword.count) lanterns"
    }

    init(directory: URL) throws {
        self.directory = directory
        // The checkout the commands run in: README's commands name `scripts/…` and
        // `.build/release/…` relative to it. The release build is the debug build the tests run
        // on (a release build takes minutes): `.build/release` links to it.
        let checkout = directory.appendingPathComponent("checkout")
        let repository = ReadmeConsole.file.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: checkout.appendingPathComponent(".build"), withIntermediateDirectories: true)
        for name in ["scripts", "docs"] {
            try FileManager.default.createSymbolicLink(at: checkout.appendingPathComponent(name), withDestinationURL: repository.appendingPathComponent(name))
        }
        try FileManager.default.createSymbolicLink(at: checkout.appendingPathComponent(".build/release"), withDestinationURL: Binaries.directory)
        bin = directory.appendingPathComponent("usr-local-bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        a = try WalkthroughMachine(name: "a", in: directory, workingDirectory: checkout, path: [bin])
        b = try WalkthroughMachine(name: "b", in: directory, workingDirectory: checkout, path: [bin])
    }

    func stop() async {
        await b.stop()
        await a.stop()
        server?.stop()
    }

    // MARK: Commands

    /// How one README command runs.
    enum Rule {
        /// On a terminal, answering its prompts; what it shows must be what README shows.
        case run
        /// Again and again until it shows what README shows (a value another device wrote, while the daemons sync it).
        case untilShown
        /// With `&`: started, and running once its output says `ready`.
        case background(ready: String)
        /// Not run, for `reason`.
        case skip(reason: String)
        /// `command` instead, for `reason`; its output as README shows it.
        case substitute(String, reason: String)
        /// Its own handling.
        case custom((ReadmeConsole.Command, [String], WalkthroughMachine) async throws -> Void)
    }

    /// README's command line as bash runs it: the server's address and pin, the passwords, the
    /// recovery key and the values earlier commands printed in place of README's `…` and examples.
    func filled(_ text: String) -> String {
        var text = output.filling(text)
        text = text.replacingOccurrences(of: Self.readmeServer, with: server?.url ?? Self.readmeServer)
        text = text.replacingOccurrences(of: "sha256/…", with: server?.pin ?? "sha256/…")
        text = text.replacingOccurrences(of: "SYNC_PASSWORD=…", with: "SYNC_PASSWORD='\(password)'")
        text = text.replacingOccurrences(of: "SYNC_NEW_PASSWORD=…", with: "SYNC_NEW_PASSWORD='\(newPassword)'")
        return text.replacingOccurrences(of: Self.readmeBin, with: bin.path)
    }

    /// The answers a person types at the prompts the walkthrough's commands show.
    var answers: [(prompt: String, answer: String)] {
        [
            ("password data for new item: ", typedItemPassword), ("retype password for new item: ", typedItemPassword),
            ("[y/N] ", "y"), ("Account password: ", password), ("Current password: ", password),
            ("New password (the revoked device's holder may know the current one): ", newPassword),
            ("New password: ", newPassword), ("Retype the new password: ", newPassword), ("Recovery key: ", output.captured["recoveryKey"] ?? ""),
            ("Password: ", storedSecret),
        ]
    }

    /// Runs README's `command` on `machine` as `rule` says, and checks what it shows against `readme`.
    func perform(_ command: ReadmeConsole.Command, shows readme: [String], rule: Rule, on machine: WalkthroughMachine) async throws {
        switch rule {
        case .run:
            try await expect(command, shows: readme, running: filled(command.text), on: machine)
        case .untilShown:
            var last = ""
            do {
                try await eventually(timeout: .seconds(30), "\(command) on \(machine.name) to show what README shows") {
                    let shown = try await machine.run(filled(command.text), answers: answers)
                    last = shown.output
                    return try shown.status == 0 && (output.matches(shown.output, readme.map(forTheServer)))
                }
            } catch {
                throw TestFailure("\(error); it showed:\n\(masked(last))")
            }
        case .background(let ready):
            #expect(readme.isEmpty, "\(command): README shows output for a command in the background")
            let text = filled(command.text)
            try #require(text.hasSuffix(" &"), "\(command) does not end in &")
            try await machine.startInBackground(String(text.dropLast(2)), ready: ready)
        case .skip:
            break
        case .substitute(let text, _):
            try await expect(command, shows: readme, running: filled(text), on: machine)
        case .custom(let body):
            try await body(command, readme, machine)
        }
    }

    /// Runs `text` (README's `command`, filled in) on `machine`: it must end with status 0 and show
    /// what README shows after it; when README shows nothing but comments on the command, the
    /// comment says what it shows instead, which is not compared.
    @discardableResult
    func expect(_ command: ReadmeConsole.Command, shows readme: [String], running text: String, on machine: WalkthroughMachine) async throws
        -> WalkthroughMachine.Shown
    {
        let shown = try await machine.run(text, answers: answers)
        // README's own command and what the terminal showed, less the account's secrets.
        #expect(shown.status == 0, "\(command) on \(machine.name) ended with \(shown.status):\n\(masked(shown.output))")
        if command.comment == nil || !readme.isEmpty {
            let matched = try output.matches(shown.output, readme.map(forTheServer))
            #expect(matched, "\(command) on \(machine.name) showed:\n\(masked(shown.output))\nREADME shows:\n\(readme.joined(separator: "\n"))")
        }
        return shown
    }

    /// README's output line with the test server's address (as a URL, or as host and port).
    private func forTheServer(_ line: String) -> String {
        guard let server else { return line }
        return line.replacingOccurrences(of: Self.readmeServer, with: server.url)
            .replacingOccurrences(of: Self.readmeServer.dropFirst("https://".count), with: "127.0.0.1:\(server.port)")
    }
}

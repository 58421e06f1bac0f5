import Foundation
import ProcessTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// README's walkthrough, read from README.md itself, run as written on a fresh machine: every
/// console block's commands in order, with bash on a terminal, on two machines (homes of their
/// own, `a` and `b`) and a real server, and what the terminal shows checked against what README
/// shows. The Install block runs first, as on a fresh machine; the rest in README's order.
///
/// README's `…` and example values are filled in from what earlier commands printed
/// (``ReadmeWalkthrough/filled(_:)``, ``ReadmeOutput``). What does not run as written, and why, is
/// in ``rules(_:_:)``: `/usr/local/bin` is a directory of the test's (no root, nothing left
/// behind) and `.build/release` the debug build (`swift build -c release` is not run: minutes);
/// `scripts/serve.sh` is the same server, built for the tests, on port 0; `systemctl --user
/// enable --now` (no user systemd in CI) is replaced by checks of the units and by starting what
/// they start. What README's prose says happened before a block, the test does in
/// ``before(_:_:_:)``: a pass store, a conflict, a third device to revoke, the server stopped.
@Suite(.serialized)
struct ReadmeWalkthroughTests {
    @Test func theWalkthroughRunsAsWritten() async throws {
        let console = try ReadmeConsole()
        try await withTemporaryDirectory { directory in
            let walk = try ReadmeWalkthrough(directory: directory)
            let c = try WalkthroughMachine(name: "c", in: directory, workingDirectory: walk.a.workingDirectory, path: [walk.bin])
            do {
                try await Self.play(console, walk, c)
            } catch {
                await Self.stop(walk, c)
                throw error
            }
            await Self.stop(walk, c)
        }
    }

    private static func stop(_ walk: ReadmeWalkthrough, _ c: WalkthroughMachine) async {
        // gpg's agent, which `pass` started on machine a.
        _ = try? await walk.a.run("gpgconf --kill all")
        await c.stop()
        await walk.stop()
    }

    private static func play(_ console: ReadmeConsole, _ walk: ReadmeWalkthrough, _ c: WalkthroughMachine) async throws {
        let install = try #require(console.blocks.first { $0.commands.first?.text == "scripts/install-deps.sh" }, "README has no Install block")
        let rules = Self.rules(walk, c)
        var used: Set<String> = []
        for block in [install] + console.blocks.filter({ $0.line != install.line }) {
            let first = try #require(block.commands.first, "README.md:\(block.line): a console block without a command")
            var machine = try await before(first.text, walk, c)
            var waitsForSync = false
            var index = block.steps.startIndex
            while index < block.steps.endIndex {
                let step = block.steps[index]
                index += 1
                switch step.kind {
                case .note(let note):
                    // The only notes README has: the other device, which waits for the daemons' sync.
                    guard note.hasPrefix("on the second device") else {
                        Issue.record("README.md:\(block.line): a note the walkthrough does not know: \(note)")
                        continue
                    }
                    try await secondDevice(walk, enrolling: try #require(block.commands.first { $0.text.contains(" enroll ") }))
                    (machine, waitsForSync) = (walk.b, true)
                case .command(let command):
                    used.insert(command.text)
                    if command.prompt == "new" {
                        // The approval: the new device's enrolment and the approver's `approve`, at once.
                        try #require(index + 1 < block.steps.endIndex, "\(command): README shows no approver after it")
                        let (approve, meanwhile) = (block.steps[index], block.steps[index + 1])
                        index += 2
                        try await approval(walk, new: (command, step.output), approve: approve, meanwhile: meanwhile)
                        continue
                    }
                    let rule = rules[command.text] ?? (waitsForSync ? .untilShown : .run)
                    try await walk.perform(command, shows: step.output, rule: rule, on: device(command, default: machine, walk))
                }
            }
            try await after(first.text, walk)
        }
        let unused = Set(rules.keys).subtracting(used)
        #expect(unused.isEmpty, "rules for commands README no longer has: \(unused)")
        let unprepared = Set(prepared).subtracting(console.blocks.compactMap { $0.commands.first?.text })
        #expect(unprepared.isEmpty, "what README's prose says happened before blocks README no longer has: \(unprepared)")
    }

    /// The machine a command runs on: the one its prompt or comment names, else the block's.
    private static func device(_ command: ReadmeConsole.Command, default machine: WalkthroughMachine, _ walk: ReadmeWalkthrough) -> WalkthroughMachine {
        if command.prompt == "old" || command.comment?.hasPrefix("device A") == true { return walk.a }
        if command.prompt == "new" || command.comment?.hasPrefix("device B") == true { return walk.b }
        return machine
    }

    // MARK: What runs other than as written

    /// The commands that do not run as README writes them, or need more than running: by README's text.
    private static func rules(_ walk: ReadmeWalkthrough, _ c: WalkthroughMachine) -> [String: ReadmeWalkthrough.Rule] {
        [
            // Install.
            "swift build -c release": .skip(
                reason: "the tests run on the debug build `swift build --build-tests` made before them (a release build takes minutes); "
                    + "the walkthrough's `.build/release` links to it"),
            "scripts/install-desktop.sh /usr/local/bin": .custom { command, readme, machine in
                try await walk.expect(command, shows: readme, running: walk.filled(command.text), on: machine)
                try await checkDesktopFiles(on: machine, executablesIn: walk.bin.path)
            },
            // The server: scripts/serve.sh builds the release server (minutes) and serves
            // ./sync-data on port 8443; the test runs the same server, built for the tests, on a
            // free port (0) and a temporary data directory.
            "scripts/serve.sh": .custom { _, readme, _ in
                #expect(readme.isEmpty)
                let server = try await TestServer(dataDirectory: walk.directory.appendingPathComponent("sync-data"))
                walk.server = server
                // What the comment says it prints.
                #expect(server.pin?.hasPrefix("sha256/") == true, "\(server.stdout)")
                #expect(server.url.hasPrefix("https://127.0.0.1:"), "\(server.stdout)")
            },
            "sync-client run &": .background(ready: "running for device"),
            "keychain secret-service &": .background(ready: "ready"),
            "sync-client revoke DEVICE": .custom { command, readme, machine in
                let device = try #require(walk.output.captured["deviceC"], "device c's ID")
                let revoked = try await walk.expect(
                    command, shows: readme, running: command.text.replacingOccurrences(of: "DEVICE", with: device), on: machine)
                if revoked.status == 0 { walk.changedPassword() }
            },
            "SYNC_NEW_PASSWORD=… sync-client recover --server https://127.0.0.1:8443 --account alice --recovery-key XXXX-…": .custom {
                command, readme, machine in
                let recovered = try await walk.expect(command, shows: readme, running: walk.filled(command.text), on: machine)
                if recovered.status == 0 { walk.changedPassword() }
            },
            // `[--keep-local]` says the option may be given.
            "sync-client leave [--keep-local]": .custom { command, readme, _ in
                // "with its daemon stopped".
                _ = try await walk.b.stopBackground("sync-client run")
                try await walk.expect(command, shows: readme, running: "sync-client leave", on: walk.b)
            },
            "secret-tool lookup service mail.example.com user alice": .custom { command, _, _ in
                // "on any device, after sync": this one, then the other with its own Secret Service.
                // (On a terminal, secret-tool ends the secret with a newline.)
                let here = try await walk.a.run(command.text)
                #expect(here.status == 0 && here.output == walk.storedSecret + "\n", "\(command) on a")
                try await walk.b.startInBackground("keychain secret-service", ready: "ready")
                try await eventually(timeout: .seconds(30), "the stored secret on the other device") {
                    try await walk.b.run(command.text).output == walk.storedSecret + "\n"
                }
            },
            "scripts/install-deps.sh && swift build -c release && scripts/install-desktop.sh": .custom { command, readme, machine in
                // Without the release build (as in Install): install-desktop.sh's default is the
                // checkout's .build/release, which links to the debug build.
                try await walk.expect(command, shows: readme, running: "scripts/install-deps.sh && scripts/install-desktop.sh", on: machine)
                try await checkDesktopFiles(on: machine, executablesIn: machine.workingDirectory.appendingPathComponent(".build/release").path)
            },
            // A container without a user systemd (CI) cannot run it; the test starts what the two
            // units start, as the user manager would, in place of the `&` processes started earlier.
            "systemctl --user enable --now keychain-secret-service sync-client": .custom { _, _, machine in
                try await startUnits(on: machine, storedSecret: walk.storedSecret)
            },
            "keychain kv --store com.example.notes get font-size": .untilShown,
            "keychain totp mail.example.org -a alice": .custom { command, readme, machine in
                // "the current code": six digits.
                let shown = try await walk.expect(command, shows: readme, running: command.text, on: machine)
                #expect(shown.output.wholeMatch(of: /\d{6}\n/) != nil, "\(command) showed: \(shown.output)")
            },
        ]
    }

    /// The first commands of the blocks ``before(_:_:_:)`` prepares.
    private static let prepared = [
        "keychain add-generic-password -a alice -s mail.example.com -w",
        "keychain find-generic-password -a alice -s mail.example.com --sync yes | tail -1", "sync-client devices",
        "sync-client status; echo \"exit $?\"", "keychain secret-service &",
        "SYNC_PASSWORD=… sync-client enroll --replace --server https://127.0.0.1:8443 --account alice --pin sha256/…",
        "keychain import --format bitwarden-json bitwarden_export.json --sync",
    ]

    /// What README's prose says happened before a block, where no command of it does. Returns the
    /// machine the block runs on where README does not say: the first, but for the conflict, which
    /// the second device resolved, and the revoked device's enrolment, on the device revoked.
    private static func before(_ first: String, _ walk: ReadmeWalkthrough, _ c: WalkthroughMachine) async throws -> WalkthroughMachine {
        switch first {
        case "keychain add-generic-password -a alice -s mail.example.com -w":
            // `pass show mail` reads the user's password store: one is made, with a key of its own.
            let made = try await walk.a.run(
                "{ gpg --batch --passphrase '' --quick-gen-key alice@example.org future-default default never && pass init alice@example.org"
                    + " && printf '%s\\n' 'from-the-pass-store' | pass insert -m mail; } >/dev/null 2>&1")
            try #require(made.status == 0, "the pass store: \(made.output)")
        case "keychain find-generic-password -a alice -s mail.example.com --sync yes | tail -1":
            // "When two devices changed one item before they synced".
            try await conflict(walk)
            return walk.b
        case "sync-client devices":
            // A third device, the one the block revokes.
            let enrolled = try await c.run(walk.filled("SYNC_PASSWORD=… sync-client enroll --server https://127.0.0.1:8443 --account alice --pin sha256/…"))
            try #require(enrolled.status == 0, "device c: \(walk.masked(enrolled.output))")
            let id = try #require(enrolled.output.split(separator: "\n").first { $0.hasPrefix("enrolled device ") }?.split(separator: " ")[2])
            walk.output.keep(String(id), as: "deviceC")
        case "sync-client status; echo \"exit $?\"":
            // "when the server is unreachable".
            try await #require(walk.server).kill9()
        case "keychain secret-service &":
            try await walk.a.startSessionBus()
            try await walk.b.startSessionBus()
        case "SYNC_PASSWORD=… sync-client enroll --replace --server https://127.0.0.1:8443 --account alice --pin sha256/…":
            // "This device was revoked": the device the account's devices block revoked, in an
            // account that does not require approval (README says what to add where it does):
            // the walkthrough's account turned it on, and turns it off again.
            let off = try await walk.a.run("sync-client account require-approval off", answers: walk.answers)
            try #require(off.status == 0, "require-approval off: \(walk.masked(off.output))")
            return c
        case "keychain import --format bitwarden-json bitwarden_export.json --sync":
            try BitwardenExport.write(to: walk.a.workingDirectory.appendingPathComponent("bitwarden_export.json"))
        default:
            break
        }
        return walk.a
    }

    private static func after(_ first: String, _ walk: ReadmeWalkthrough) async throws {
        switch first {
        case "sync-client status; echo \"exit $?\"":
            // The server back, on its port and data.
            let server = try #require(walk.server)
            walk.server = try await TestServer(dataDirectory: server.dataDirectory, port: server.port)
        case "sync-client account require-approval on":
            // The new device's daemon: the blocks after this one sync through the daemons of both.
            try await walk.b.startInBackground("sync-client run", ready: "running for device")
        default:
            break
        }
    }
}

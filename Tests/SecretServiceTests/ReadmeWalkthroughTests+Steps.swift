import Foundation
import ProcessTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The walkthrough's steps that are more than one command and its output.
extension ReadmeWalkthroughTests {
    /// "on the second device, after `sync-client enroll` (same account, no --create) and `sync-client run`".
    static func secondDevice(_ walk: ReadmeWalkthrough, enrolling first: ReadmeConsole.Command) async throws {
        let enroll = walk.filled(first.text.replacingOccurrences(of: " --create", with: ""))
        let enrolled = try await walk.b.run(enroll, answers: walk.answers)
        try #require(enrolled.status == 0, "the second device's `sync-client enroll`: \(enrolled.output)")
        try await walk.b.startInBackground("sync-client run", ready: "running for device")
    }

    /// The approval as a person runs it: the new device's enrolment, then `approve` on the old
    /// one; both show a code and ask, the person compares the two codes and answers yes on both.
    /// README shows the new device's terminal in two parts, before and after the approver's.
    static func approval(
        _ walk: ReadmeWalkthrough, new: (command: ReadmeConsole.Command, output: [String]), approve: ReadmeConsole.Step,
        meanwhile: ReadmeConsole.Step
    ) async throws {
        guard case .command(let approveCommand) = approve.kind, approveCommand.prompt == "old", case .note(let note) = meanwhile.kind,
            note.hasPrefix("meanwhile, on the new device")
        else {
            Issue.record("\(new.command): not followed by `old$ sync-client approve` and the new device's \"meanwhile\"")
            return
        }
        let newDevice = try walk.b.startOnTerminal(walk.filled(new.command.text))
        defer { newDevice.stop() }
        var typedPassword = false
        try await eventually(timeout: .seconds(60), "the new device's request") {
            // A person types the password when it is asked (README shows whether it is).
            if !typedPassword, shown(newDevice).contains("Account password: ") {
                try newDevice.type(walk.password + "\n")
                typedPassword = true
            }
            return shown(newDevice).split(separator: "\n", omittingEmptySubsequences: false).dropLast().contains { $0.hasPrefix("on an enrolled device, run:") }
        }
        let requested = try walk.output.matches(shown(newDevice), new.output)
        try #require(requested, "\(new.command) showed:\n\(walk.masked(shown(newDevice)))\nREADME shows:\n\(new.output.joined(separator: "\n"))")

        let approver = try walk.a.startOnTerminal(walk.filled(approveCommand.text))
        defer { approver.stop() }
        for process in [newDevice, approver] { try await process.waitForOutput(containing: "[y/N] ") }
        let codes = [newDevice, approver].map { process in
            shown(process).split(separator: "\n").first { $0.hasPrefix("approval code: ") }
        }
        try #require(codes[0] != nil && codes[0] == codes[1], "the two devices show different codes")
        try newDevice.type("y\n")
        try approver.type("y\n")

        let approved = try await approver.waitForExit(timeout: .seconds(60))
        let enrolled = try await newDevice.waitForExit(timeout: .seconds(60))
        #expect(approved.status == 0 && enrolled.status == 0, "\(approveCommand): \(approved.status), \(new.command): \(enrolled.status)")
        #expect(
            try walk.output.matches(shown(approver), approve.output),
            "\(approveCommand) showed:\n\(walk.masked(shown(approver)))\nREADME shows:\n\(approve.output.joined(separator: "\n"))")
        let newDeviceShows = new.output + meanwhile.output
        #expect(
            try walk.output.matches(shown(newDevice), newDeviceShows),
            "\(new.command) showed:\n\(walk.masked(shown(newDevice)))\nREADME shows:\n\(newDeviceShows.joined(separator: "\n"))")
    }

    /// What a terminal shows, with "\r\n" read as "\n".
    private static func shown(_ process: ChildProcess) -> String {
        process.stdout.replacingOccurrences(of: "\r\n", with: "\n")
    }

    /// "When two devices changed one item before they synced": both daemons stop, each device
    /// changes the item, and each syncs, the first device first, so the second device meets the
    /// conflict and keeps the losing version; the daemons start again, and both devices hold the
    /// winner. (Which change wins is not asked: both were made after the devices last heard the
    /// server's time, which bounds their stamps, decision 0108.)
    static func conflict(_ walk: ReadmeWalkthrough) async throws {
        for machine in [walk.a, walk.b] { _ = try await machine.stopBackground("sync-client run") }
        for machine in [walk.a, walk.b] {
            let changed = try await machine.run("keychain add-generic-password -a alice -s mail.example.com -l Mail -w 'changed on \(machine.name)' --sync -U")
            try #require(changed.status == 0, "the change on \(machine.name): \(changed.output)")
        }
        for machine in [walk.a, walk.b] {
            let synced = try await machine.run("sync-client sync")
            try #require(synced.status == 0, "sync on \(machine.name): \(synced.output)")
        }
        for machine in [walk.a, walk.b] { try await machine.startInBackground("sync-client run", ready: "running for device") }
        let find = "keychain find-generic-password -a alice -s mail.example.com --sync yes -w"
        var shown: [String] = []
        do {
            try await eventually(timeout: .seconds(30), "one value of the item on both devices") {
                shown = [try await walk.a.run(find).output, try await walk.b.run(find).output]
                return shown[0].hasPrefix("changed on ") && shown[0] == shown[1]
            }
        } catch {
            throw TestFailure("\(error); they show \(shown)")
        }
    }

    /// What `scripts/install-desktop.sh` installed on `machine`: two systemd user units and the
    /// D-Bus activation file, which start the executables in `bin`; the units as
    /// `systemd-analyze verify` reads them (it checks that each command is an executable).
    static func checkDesktopFiles(on machine: WalkthroughMachine, executablesIn bin: String) async throws {
        let units = machine.home.appendingPathComponent(".config/systemd/user")
        for (unit, command) in [("keychain-secret-service.service", "keychain secret-service"), ("sync-client.service", "sync-client run")] {
            let text = try String(contentsOf: units.appendingPathComponent(unit), encoding: .utf8)
            #expect(value(of: "ExecStart", in: text) == "\(bin)/\(command)", "\(unit): \(text)")
        }
        let activation = try String(
            contentsOf: machine.home.appendingPathComponent(".local/share/dbus-1/services/org.freedesktop.secrets.service"), encoding: .utf8)
        #expect(value(of: "Exec", in: activation) == "\(bin)/keychain secret-service", "\(activation)")
        let verified = try await machine.run(
            "systemd-analyze --user verify \(units.appendingPathComponent("keychain-secret-service.service").path) "
                + units.appendingPathComponent("sync-client.service").path)
        #expect(verified.status == 0 && verified.output.isEmpty, "systemd-analyze verify: \(verified.output)")
    }

    /// In place of `systemctl --user enable --now keychain-secret-service sync-client`: the
    /// processes the walkthrough started with `&` stop, and what the units start runs instead.
    /// keychain-secret-service.service is of `Type=dbus`, started when a client asks for
    /// org.freedesktop.secrets, by the activation file's command, the unit's own.
    static func startUnits(on machine: WalkthroughMachine, storedSecret: String) async throws {
        let units = machine.home.appendingPathComponent(".config/systemd/user")
        let service = try String(contentsOf: units.appendingPathComponent("keychain-secret-service.service"), encoding: .utf8)
        let activation = try String(
            contentsOf: machine.home.appendingPathComponent(".local/share/dbus-1/services/org.freedesktop.secrets.service"), encoding: .utf8)
        let command = try #require(value(of: "ExecStart", in: service))
        #expect(value(of: "Exec", in: activation) == command)
        _ = try await machine.stopBackground("keychain secret-service")
        let found = try await machine.run("secret-tool lookup service mail.example.com user alice")
        #expect(found.status == 0 && found.output == storedSecret + "\n", "secret-tool lookup through the activated service")
        let owner = try await machine.run(
            "gdbus call --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus"
                + " --method org.freedesktop.DBus.GetConnectionUnixProcessID org.freedesktop.secrets")
        let pid = try #require(owner.output.split(whereSeparator: { !$0.isNumber }).compactMap { pid_t($0) }.last, "\(owner.output)")
        machine.adopt(pid)
        // `keychain secret-service` becomes the keychain-secret-service installed beside it, on the default keychain.
        let keychain = URL(fileURLWithPath: String(command.prefix { $0 != " " })).resolvingSymlinksInPath()
        let commandLine = try String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8).split(separator: "\0").joined(separator: " ")
        let keychainPath = machine.home.appendingPathComponent(".local/share/synckeychain/keychain.db").path
        #expect(
            commandLine == keychain.deletingLastPathComponent().appendingPathComponent("keychain-secret-service").path + " --keychain " + keychainPath,
            "the bus started \(commandLine)")

        let daemon = try String(contentsOf: units.appendingPathComponent("sync-client.service"), encoding: .utf8)
        _ = try await machine.stopBackground("sync-client run")
        try await machine.startInBackground(try #require(value(of: "ExecStart", in: daemon)), ready: "running for device")
    }

    /// The value of `key=` in a unit or desktop-entry file.
    private static func value(of key: String, in text: String) -> String? {
        text.split(separator: "\n").first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) }
    }
}

/// The Bitwarden export README's import reads: 211 logins, one of them (alice at
/// mail.example.org) with the TOTP seed `keychain totp` reads, and a card as item 17.
enum BitwardenExport {
    static func write(to file: URL) throws {
        var items: [[String: Any]] = (1...211).map { index in
            ["type": 1, "name": "Site \(index)",
             "login": ["uris": [["uri": "https://site\(index).example.net"]], "username": "alice", "password": "site-\(index)-password"]]
        }
        items[0] = ["type": 1, "name": "Mail",
                    "login": ["uris": [["uri": "https://mail.example.org"]], "username": "alice", "password": "mail-password",
                              "totp": "JBSWY3DPEHPK3PXP"]]
        items.insert(["type": 3, "name": "Visa", "card": ["number": "4111111111111111"]], at: 16)
        let export: [String: Any] = ["encrypted": false, "folders": [], "items": items]
        try JSONSerialization.data(withJSONObject: export, options: [.prettyPrinted]).write(to: file)
    }
}

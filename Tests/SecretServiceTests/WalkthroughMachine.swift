import Foundation
import ProcessTesting

#if canImport(Glibc)
import Glibc
#endif

/// One machine of README's walkthrough: a home of its own (so the keychain, the sync client's
/// state, the pass store and the desktop files are at their default places below it), the
/// installed tools first on its PATH, and a bash that runs README's command lines on a terminal
/// in the walkthrough's working directory. Everything it starts is stopped by ``stop()``.
final class WalkthroughMachine {
    let name: String
    let home: URL
    /// The directory commands run in: it holds `scripts`, `docs` and `.build/release` as a checkout does.
    let workingDirectory: URL
    private(set) var environment: [String: String]
    /// The processes README starts with `&`, by command: stopped last to first.
    private var started: [(command: String, process: ChildProcess)] = []
    /// Processes started for this machine by another (the bus's activation): stopped by their ID.
    private var adopted: [pid_t] = []

    init(name: String, in directory: URL, workingDirectory: URL, path: [URL]) throws {
        self.name = name
        self.workingDirectory = workingDirectory
        home = directory.appendingPathComponent(name)
        let runtime = home.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        environment = [
            "HOME": home.path, "USER": "alice", "LOGNAME": "alice", "LANG": "C.UTF-8", "TERM": "dumb",
            "PATH": (path.map(\.path) + ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]).joined(separator: ":"),
            "XDG_DATA_HOME": home.appendingPathComponent(".local/share").path,
            "XDG_CONFIG_HOME": home.appendingPathComponent(".config").path,
            "XDG_RUNTIME_DIR": runtime.path,
        ]
    }

    /// What a terminal showed while a command ran, with "\r\n" read as "\n".
    struct Shown {
        var status: Int32
        var output: String
    }

    /// Runs `command` with bash on a terminal to its end (at most `timeout`), typing the answer to
    /// each prompt in `answers` whenever the terminal shows it.
    func run(_ command: String, answers: [(prompt: String, answer: String)] = [], timeout: Duration = .seconds(60)) async throws -> Shown {
        let process = try startOnTerminal(command)
        defer { process.stop() }
        // How much of the output the answers typed so far have read (in UTF-8 bytes).
        var seen = 0
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            let rest = String(Substring(process.stdout.utf8.dropFirst(seen)))
            let earliest = answers.compactMap { prompt, answer in rest.range(of: prompt).map { (end: $0.upperBound, answer: answer) } }
                .min { $0.end < $1.end }
            if let earliest {
                try process.type(earliest.answer + "\n")
                seen += rest.utf8.distance(from: rest.startIndex, to: earliest.end)
                continue
            }
            guard ContinuousClock.now < deadline else { throw ProcessFailure("\(name): the command did not end within \(timeout)") }
            try await Task.sleep(for: .milliseconds(5))
        }
        let result = try await process.waitForExit(timeout: .seconds(10))
        return Shown(status: result.status, output: result.stdout.replacingOccurrences(of: "\r\n", with: "\n"))
    }

    /// Runs `command` on a terminal without waiting for it, for a test that reads and types as it
    /// goes; its output is what the terminal shows.
    func startOnTerminal(_ command: String) throws -> ChildProcess {
        try PseudoTerminal.start(
            URL(fileURLWithPath: "/usr/bin/env"), ["-C", workingDirectory.path, bash.path, "-c", command], environment: environment)
    }

    /// Starts a command README runs with `&` (bash runs it in its own place) and waits until its
    /// standard output says `ready`.
    @discardableResult
    func startInBackground(_ command: String, ready: String) async throws -> ChildProcess {
        let process = try ChildProcess(
            URL(fileURLWithPath: "/usr/bin/env"), ["-C", workingDirectory.path, bash.path, "-c", command], environment: environment,
            removing: Array(ProcessInfo.processInfo.environment.keys))
        started.append((command, process))
        do {
            try await process.waitForOutput(containing: ready, timeout: .seconds(60))
        } catch {
            throw ProcessFailure("\(name): `\(command)` did not start: \(process.stdout)\(process.stderr)")
        }
        return process
    }

    /// Stops what `command` started in the background (SIGTERM, as `systemctl stop` does) and waits for its end.
    func stopBackground(_ command: String) async throws -> ChildProcess.Result {
        guard let index = started.firstIndex(where: { $0.command == command }) else { throw ProcessFailure("\(name): \(command) is not running") }
        let process = started.remove(at: index).process
        process.signal(SIGTERM)
        do {
            return try await process.waitForExit(timeout: .seconds(60))
        } catch {
            // Killed, so that nothing waits on it; named, with what it said last: a stop that
            // hangs is a finding to trace.
            process.stop()
            throw ProcessFailure("\(name): `\(command)` did not end within 60 s of SIGTERM; its last output: \(process.stdout.suffix(1_000)) \(process.stderr.suffix(2_000))")
        }
    }

    /// Takes `pid` (a process started for this machine by another, such as the session bus) to stop with the machine.
    func adopt(_ pid: pid_t) {
        adopted.append(pid)
    }

    /// Starts a session bus of its own with `dbus-run-session`, as a desktop login does; every
    /// later command talks to it. It ends when its shell reads a line (``stop()``).
    func startSessionBus() async throws {
        let session = try ChildProcess(
            URL(fileURLWithPath: "/usr/bin/dbus-run-session"), ["--", bash.path, "-c", #"echo "bus: $DBUS_SESSION_BUS_ADDRESS"; read -r _"#],
            environment: environment, removing: Array(ProcessInfo.processInfo.environment.keys), typing: true)
        sessionBus = session
        try await session.waitForOutput(containing: "\n")
        guard let line = session.stdout.split(separator: "\n").first, line.hasPrefix("bus: unix:") else {
            throw ProcessFailure("\(name): dbus-run-session printed no address: \(session.stdout)\(session.stderr)")
        }
        environment["DBUS_SESSION_BUS_ADDRESS"] = String(line.dropFirst("bus: ".count))
    }

    private var sessionBus: ChildProcess?

    func stop() async {
        for (_, process) in started.reversed() {
            process.signal(SIGTERM)
            if (try? await process.waitForExit(timeout: .seconds(10))) == nil { process.stop() }
        }
        started = []
        for pid in adopted {
            kill(pid, SIGTERM)
            let deadline = ContinuousClock.now + .seconds(10)
            while kill(pid, 0) == 0, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
            if kill(pid, 0) == 0 { kill(pid, SIGKILL) }
        }
        adopted = []
        if let sessionBus {
            try? sessionBus.type("\n")
            if (try? await sessionBus.waitForExit(timeout: .seconds(10))) == nil { sessionBus.stop() }
        }
        sessionBus = nil
    }

    private let bash = URL(fileURLWithPath: "/bin/bash")
}

import Foundation
import ProcessTesting

/// Runs the built `keychain` binary as a real process against a keychain in a temporary directory.
struct KeychainProcess {
    struct Output {
        var status: Int32
        var stdout: Data
        var stderr: String
        var text: String { String(decoding: stdout, as: UTF8.self) }
    }

    let directory: URL
    var path: String { directory.appendingPathComponent("kc/keychain.db").path }

    /// `$KEYCHAIN_BIN_DIR`, else beside the test bundle.
    static var binary: URL {
        if let directory = ProcessInfo.processInfo.environment["KEYCHAIN_BIN_DIR"] {
            return URL(fileURLWithPath: directory).appendingPathComponent("keychain")
        }
        return BuiltProducts.directory(containing: "keychain").appendingPathComponent("keychain")
    }

    /// A fresh temporary directory for one test; removed by ``remove()``.
    static func temporary() -> KeychainProcess {
        KeychainProcess(directory: FileManager.default.temporaryDirectory.appendingPathComponent("cli-tests-\(UUID().uuidString)"))
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs `keychain ARGUMENTS --keychain PATH` (unless `keychainOption` is false); throws when it
    /// has not ended within `timeout` (it is then killed).
    @discardableResult
    func run(
        _ arguments: [String], environment extra: [String: String] = [:], keychainOption: Bool = true, timeout: Duration = .seconds(60)
    ) throws -> Output {
        let result = try ChildProcess.runBlocking(
            Self.binary, arguments + (keychainOption ? ["--keychain", path] : []),
            environment: extra.merging(["HOME": directory.path]) { own, _ in own },
            removing: ChildProcess.developerSettings + ["XDG_DATA_HOME"], timeout: timeout)
        return Output(status: result.status, stdout: Data(result.stdoutBytes), stderr: result.stderr)
    }

    /// Runs `keychain --keychain PATH ARGUMENTS` (the option first, so that the command line ends
    /// as given) on a real pseudo-terminal, answering each of `steps`' prompts; standard output and
    /// error are both the terminal's.
    func runOnTerminal(_ arguments: [String], steps: [PseudoTerminal.Step], timeout: Duration = .seconds(60)) throws -> PseudoTerminal.Result {
        try PseudoTerminal.run(
            Self.binary, ["--keychain", path] + arguments, environment: ["HOME": directory.path],
            removing: ChildProcess.developerSettings + ["XDG_DATA_HOME"], steps: steps, timeout: timeout)
    }

    /// Runs `keychain --keychain PATH ARGUMENTS` with `input` as its standard input (a pipe).
    func run(_ arguments: [String], input: String, timeout: Duration = .seconds(60)) throws -> Output {
        let result = try ChildProcess.runBlocking(
            URL(fileURLWithPath: "/bin/sh"), ["-c", "input=$1; shift; printf '%s' \"$input\" | \"$0\" \"$@\"", Self.binary.path, input, "--keychain", path] + arguments,
            environment: ["HOME": directory.path], removing: ChildProcess.developerSettings + ["XDG_DATA_HOME"], timeout: timeout)
        return Output(status: result.status, stdout: Data(result.stdoutBytes), stderr: result.stderr)
    }
}

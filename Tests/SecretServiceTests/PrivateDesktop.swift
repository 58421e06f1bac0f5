import Foundation
import ProcessTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A private session bus (its own `dbus-daemon`, no service activation, so nothing but the
/// service under test can own `org.freedesktop.secrets`), the service over a temporary keychain,
/// and the real clients run against them. Everything is stopped and removed afterwards.
final class PrivateDesktop: @unchecked Sendable {
    let directory: URL
    let busAddress: String
    let keychainPath: String
    /// Every process started, with the signal that stops it.
    private var processes: [(process: RunningProcess, signal: Int32)] = []
    /// The service under test.
    private(set) var service: RunningProcess?

    /// - Parameter serviceEnvironment: Variables for the service besides the bus's and the
    ///   keychain's (an askpass program).
    static func with<T>(serviceEnvironment: [String: String] = [:], _ body: (PrivateDesktop) async throws -> T) async throws -> T {
        let desktop = try await PrivateDesktop(serviceEnvironment: serviceEnvironment)
        defer { desktop.stop() }
        return try await body(desktop)
    }

    private let serviceEnvironment: [String: String]

    private init(serviceEnvironment: [String: String]) async throws {
        self.serviceEnvironment = serviceEnvironment
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("secret-service-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let socket = directory.appendingPathComponent("bus").path
        busAddress = "unix:path=\(socket)"
        keychainPath = directory.appendingPathComponent("keychain/keychain.db").path
        let configuration = directory.appendingPathComponent("bus.conf")
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>\(busAddress)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """.write(to: configuration, atomically: true, encoding: .utf8)
        let bus = try start("/usr/bin/dbus-daemon", ["--config-file=\(configuration.path)", "--nofork", "--print-address=1"], stopWith: SIGKILL)
        try await bus.waitForOutput(containing: "unix:")

        try await startService()
    }

    /// Starts the service (again, after ``restartService()`` stopped it).
    private func startService() async throws {
        let service = try start(Binaries.secretService.path, ["--keychain", keychainPath], environment: serviceEnvironment)
        self.service = service
        try await service.waitForOutput(containing: "ready")
    }

    /// Stops the service gracefully and starts a new one over the same keychain.
    func restartService() async throws {
        if let service {
            service.stop()
            _ = try await service.waitForExit(timeout: .seconds(10))
        }
        try await startService()
    }

    /// Starts a process on this bus; stopped with the desktop by `signal`: SIGTERM for the
    /// products (their graceful stop is part of what is tested), SIGKILL for helpers that hold no
    /// state (a bus daemon, a monitor), which ignore the SIGTERM a test process's signal mask
    /// leaves them.
    func start(
        _ executable: String, _ arguments: [String], environment extra: [String: String] = [:], stopWith signal: Int32 = SIGTERM
    ) throws -> RunningProcess {
        let process = try RunningProcess(executable, arguments, environment: environment.merging(extra) { $1 }, directory: directory)
        processes.append((process, signal))
        return process
    }

    var environment: [String: String] { ["DBUS_SESSION_BUS_ADDRESS": busAddress, "KEYCHAIN_PATH": keychainPath] }

    /// Runs a client to its end.
    func run(
        _ executable: String, _ arguments: [String], input: String? = nil, environment extra: [String: String] = [:],
        timeout: Duration = .seconds(60)
    ) async throws -> RunningProcess.Result {
        try await RunningProcess(executable, arguments, environment: environment.merging(extra) { $1 }, input: input, directory: directory)
            .waitForExit(timeout: timeout)
    }

    func secretTool(_ arguments: [String], input: String? = nil) async throws -> RunningProcess.Result {
        try await run("/usr/bin/secret-tool", arguments, input: input)
    }

    func stop() {
        for (process, signal) in processes.reversed() { process.stop(signal) }
        try? FileManager.default.removeItem(at: directory)
    }
}

/// The built executables, beside the test bundle.
enum Binaries {
    static let directory = BuiltProducts.directory(containing: "keychain-secret-service")

    static var secretService: URL { directory.appendingPathComponent("keychain-secret-service") }
    static var keychain: URL { directory.appendingPathComponent("keychain") }
    static var syncClient: URL { directory.appendingPathComponent("sync-client") }
}

/// A child process whose output goes to files in `directory` (no pipes to drain); every wait is
/// bounded, and a process that outlives its test is killed.
final class RunningProcess: @unchecked Sendable {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    let process: SpawnedProcess
    private let outputFile: URL
    private let errorFile: URL

    init(_ executable: String, _ arguments: [String], environment: [String: String], input: String? = nil, directory: URL) throws {
        let name = UUID().uuidString
        outputFile = directory.appendingPathComponent("\(name).out")
        errorFile = directory.appendingPathComponent("\(name).err")
        let output = try Self.open(outputFile, O_WRONLY | O_CREAT | O_TRUNC)
        defer { close(output) }
        let errors = try Self.open(errorFile, O_WRONLY | O_CREAT | O_TRUNC)
        defer { close(errors) }
        var inputFile: Int32?
        if let input {
            let path = directory.appendingPathComponent("\(name).in")
            try Data(input.utf8).write(to: path)
            inputFile = try Self.open(path, O_RDONLY)
        }
        defer { if let inputFile { close(inputFile) } }
        process = try SpawnedProcess(
            executable, arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
            standardInput: inputFile, standardOutput: output, standardError: errors
        )
    }

    /// A close-on-exec descriptor of `file` for a child's standard stream (only the child's copy,
    /// made by the spawn, stays open in it).
    private static func open(_ file: URL, _ flags: Int32) throws -> Int32 {
        let descriptor = Glibc.open(file.path, flags | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw ProcessFailure("cannot open \(file.lastPathComponent) (errno \(errno))") }
        return descriptor
    }

    var stdout: String { (try? String(contentsOf: outputFile, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOf: errorFile, encoding: .utf8)) ?? "" }

    func waitForOutput(containing text: String, timeout: Duration = .seconds(30)) async throws {
        try await wait(for: text, in: \.stdout, timeout: timeout)
    }

    func waitForError(containing text: String, timeout: Duration = .seconds(30)) async throws {
        try await wait(for: text, in: \.stderr, timeout: timeout)
    }

    private func wait(for text: String, in stream: KeyPath<RunningProcess, String>, timeout: Duration) async throws {
        let deadline = ContinuousClock.now + timeout
        while !self[keyPath: stream].contains(text) {
            guard process.isRunning else { throw ProcessFailure("exited before printing \(text): \(stderr)") }
            guard ContinuousClock.now < deadline else { throw ProcessFailure("did not print \(text) within \(timeout): \(stderr)") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    func waitForExit(timeout: Duration = .seconds(60)) async throws -> Result {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else {
                process.signal(SIGKILL)
                throw ProcessFailure("\(process.name) did not end within \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        return Result(status: process.exitStatus ?? -1, stdout: stdout, stderr: stderr)
    }

    /// `signal` (SIGTERM: a graceful stop), then SIGKILL if it is still there after five seconds.
    func stop(_ signal: Int32 = SIGTERM) {
        guard process.isRunning else { return }
        process.signal(signal)
        if process.waitForExit(timeout: .seconds(5)) == nil { process.signal(SIGKILL) }
    }
}

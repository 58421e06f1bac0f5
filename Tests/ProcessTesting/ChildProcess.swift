import Foundation

/// A process started by a test: its output is collected whole (``OutputPipe``), every wait is
/// bounded, and it is killed when the test is done with it (``stop()``), whatever happened.
public final class ChildProcess: Sendable {
    public struct Result: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        /// Standard output as bytes, for output that is not text.
        public var stdoutBytes: [UInt8]
    }

    private let process: SpawnedProcess
    private let output: OutputPipe
    private let errors: OutputPipe
    /// The write end of the child's standard input, when the test types into it (``type(_:)``).
    private let input: Int32?

    public var pid: Int32 { process.pid }
    public var isRunning: Bool { process.isRunning }
    public var stdout: String { output.text }
    public var stderr: String { errors.text }

    /// The variables of a developer's own shell that would point a product at their keychain or
    /// account; a child does not inherit them unless a test sets them.
    public static let developerSettings = ["SYNC_PASSWORD", "KEYCHAIN_PATH", "KEYCHAIN_PASSCODE", "KEYCHAIN_NEW_PASSCODE"]

    /// Starts `executable` with the test process's environment, less `removing`, plus `environment`;
    /// standard input is empty, or with `typing`, a pipe the test writes to with ``type(_:)``.
    public init(
        _ executable: URL, _ arguments: [String], environment: [String: String] = [:], removing: [String] = ChildProcess.developerSettings,
        typing: Bool = false
    ) throws {
        let output = try OutputPipe()
        let errors = try OutputPipe()
        let typed = typing ? try OutputPipe.makePipe() : nil
        defer {
            output.childStarted()
            errors.childStarted()
            if let typed { close(typed.read) }
        }
        self.output = output
        self.errors = errors
        input = typed?.write
        process = try SpawnedProcess(
            executable.path, arguments, environment: SpawnedProcess.environment(adding: environment, removing: removing),
            standardInput: typed?.read, standardOutput: output.writeEnd.fileDescriptor, standardError: errors.writeEnd.fileDescriptor
        )
    }

    deinit {
        if let input { close(input) }
    }

    /// Writes `text` to the child's standard input (started with `typing`), as a person types a line.
    public func type(_ text: String) throws {
        guard let input else { throw ProcessFailure("\(process.name) was started without typing") }
        // A child that already ended makes the write fail with EPIPE, not kill the test process
        // (children start with every signal at its default: SpawnedProcess).
        _ = Glibc.signal(SIGPIPE, SIG_IGN)
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw ProcessFailure("cannot type into \(process.name) (errno \(errno))") }
    }

    /// Runs a process to its end (at most `timeout`).
    public static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String] = [:], removing: [String] = ChildProcess.developerSettings,
        timeout: Duration = .seconds(60)
    ) async throws -> Result {
        let child = try ChildProcess(executable, arguments, environment: environment, removing: removing)
        return try await child.waitForExit(timeout: timeout)
    }

    /// The same, blocking the calling thread: for tests that are not async.
    public static func runBlocking(
        _ executable: URL, _ arguments: [String], environment: [String: String] = [:], removing: [String] = ChildProcess.developerSettings,
        timeout: Duration = .seconds(60)
    ) throws -> Result {
        let child = try ChildProcess(executable, arguments, environment: environment, removing: removing)
        // Both pipes end when the child has ended; the exit follows at once.
        let ended = child.output.waitForEnd(timeout: timeout) && child.errors.waitForEnd(timeout: .seconds(5))
        guard ended else {
            child.stop()
            throw ProcessFailure("\(executable.lastPathComponent) did not end within \(timeout)")
        }
        guard child.process.waitForExit(timeout: .seconds(5)) != nil else {
            child.stop()
            throw ProcessFailure("\(executable.lastPathComponent) closed its output but did not end")
        }
        return child.result
    }

    /// Waits for the process to end and its output to be read whole; kills it when `timeout` passes.
    public func waitForExit(timeout: Duration = .seconds(60)) async throws -> Result {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning || !output.hasEnded || !errors.hasEnded {
            guard ContinuousClock.now < deadline else {
                stop()
                throw ProcessFailure("\(process.name) did not end within \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(2))
        }
        return result
    }

    private var result: Result {
        let bytes = output.bytes
        return Result(status: process.exitStatus ?? -1, stdout: String(decoding: bytes, as: UTF8.self), stderr: stderr, stdoutBytes: bytes)
    }

    /// Waits until stdout contains `text`; fails when the process ends first.
    public func waitForOutput(containing text: String, timeout: Duration = .seconds(60)) async throws {
        let deadline = ContinuousClock.now + timeout
        while !stdout.contains(text) {
            guard process.isRunning || !output.hasEnded else { throw ProcessFailure("process ended before printing \(text): \(stderr)") }
            guard ContinuousClock.now < deadline else { throw ProcessFailure("timed out waiting for output containing \(text)") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    public func signal(_ signal: Int32) {
        process.signal(signal)
    }

    /// Kills the process (SIGKILL) without waiting; its reaper collects it.
    public func stop() {
        process.signal(SIGKILL)
    }
}

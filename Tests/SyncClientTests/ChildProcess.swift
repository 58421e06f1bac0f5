import Foundation
import Synchronization

/// A process started by a test: its output is collected as it arrives, and it is killed when the
/// test ends (``stop()``), whatever happened.
final class ChildProcess: Sendable {
    struct Result: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    private final class Output: Sendable {
        let text = Mutex<(stdout: String, stderr: String)>(("", ""))
        /// How many of the two streams reached their end.
        let ended = Mutex(0)
    }

    private let process: Process
    private let output = Output()
    private let readEnds: [FileHandle]
    private let readEndsClosed = Mutex(false)

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }
    var stdout: String { output.text.withLock { $0.stdout } }
    var stderr: String { output.text.withLock { $0.stderr } }

    init(_ executable: URL, _ arguments: [String], environment: [String: String] = [:]) throws {
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment
        merged.removeValue(forKey: "SYNC_PASSWORD")
        merged.removeValue(forKey: "KEYCHAIN_PATH")
        for (key, value) in environment { merged[key] = value }
        process.environment = merged
        let out = Pipe()
        let err = Pipe()
        readEnds = [out.fileHandleForReading, err.fileHandleForReading]
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        out.fileHandleForReading.readabilityHandler = { [output] handle in
            let data = handle.availableData
            guard !data.isEmpty else { return Self.ended(handle, output) }
            output.text.withLock { $0.stdout += String(decoding: data, as: UTF8.self) }
        }
        err.fileHandleForReading.readabilityHandler = { [output] handle in
            let data = handle.availableData
            guard !data.isEmpty else { return Self.ended(handle, output) }
            output.text.withLock { $0.stderr += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
    }

    /// Runs a process to completion (at most `timeout`).
    static func run(_ executable: URL, _ arguments: [String], environment: [String: String] = [:], timeout: Duration = .seconds(60)) async throws -> Result {
        let child = try ChildProcess(executable, arguments, environment: environment)
        return try await child.waitForExit(timeout: timeout)
    }

    /// Waits for the process to end, polling with a deadline; kills it when the deadline passes.
    func waitForExit(timeout: Duration = .seconds(60)) async throws -> Result {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now > deadline {
                stop()
                throw TestFailure("process \(process.executableURL?.lastPathComponent ?? "") did not end within \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        // The output is whole once both pipes reached their end: on a loaded machine the handlers
        // can lag well behind the exit (a fixed 20 ms pause here once cut a large dump short).
        // A pipe can also stay open after the exit, when a process another test started at the
        // same moment inherited its write end; so the wait for the end is capped.
        let outputDeadline = ContinuousClock.now + .seconds(3)
        while output.ended.withLock({ $0 }) < 2 && ContinuousClock.now < outputDeadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        closeReadEnds()
        return Result(status: process.terminationStatus, stdout: stdout, stderr: stderr)
    }

    deinit {
        closeReadEnds()
    }

    /// A stream's end: stop watching it (an ended pipe stays readable) and count it.
    private static func ended(_ handle: FileHandle, _ output: Output) {
        handle.readabilityHandler = nil
        output.ended.withLock { $0 += 1 }
    }

    /// Stops watching and closes this side of the output pipes. A full test run starts hundreds
    /// of processes: left open, their pipes push the process past 1,024 descriptors, where
    /// Foundation's `select`-based run loop stops noticing events and the whole run hangs.
    private func closeReadEnds() {
        guard readEndsClosed.withLock({ closed in defer { closed = true }; return !closed }) else { return }
        for handle in readEnds {
            handle.readabilityHandler = nil
            try? handle.close()
        }
    }

    /// Waits until stdout contains `text`.
    func waitForOutput(containing text: String, timeout: Duration = .seconds(60)) async throws {
        try await eventually(timeout: timeout, "output containing \(text)") { self.stdout.contains(text) || !self.isRunning }
        guard stdout.contains(text) else { throw TestFailure("process ended before printing \(text): \(stderr)") }
    }

    func signal(_ signal: Int32) {
        if process.isRunning { kill(process.processIdentifier, signal) }
    }

    /// Kills the process (SIGKILL). It does not block waiting (that would hold one of the few
    /// cooperative threads); Foundation reaps the process.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Polls `condition` until it holds or `timeout` passes.
func eventually(timeout: Duration = .seconds(60), _ what: String, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        if ContinuousClock.now > deadline { throw TestFailure("timed out waiting for \(what)") }
        try await Task.sleep(for: .milliseconds(10))
    }
}

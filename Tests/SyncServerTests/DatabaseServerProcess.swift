import Foundation
import SyncServer
import Testing

/// The built `sync-server` binary on a PostgreSQL database (`--database`, `--insecure-http`, port 0),
/// in a working directory of its own.
final class DatabaseServerProcess: Sendable {
    let process: Process
    let port: Int

    init(database: PostgresLocation, directory: URL) async throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = ServerProcess.binary
        process.arguments = ["--host", "127.0.0.1", "--port", "0", "--insecure-http", "--database", "\(database)"]
        process.currentDirectoryURL = directory
        process.environment = ProcessInfo.processInfo.environment.merging(["LOG_LEVEL": "warning"]) { $1 }
        let log = directory.appendingPathComponent("server.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: log)
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process

        // Polls the log for the "listening on" line (no pipe: nothing to drain, nothing to block on).
        let deadline = ContinuousClock.now + .seconds(60)
        var port: Int?
        while port == nil, ContinuousClock.now < deadline, process.isRunning {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            port = text.split(separator: "\n").lazy
                .filter { $0.hasPrefix("sync-server: listening on ") }
                .compactMap { $0.split(separator: ":").last.flatMap { Int($0) } }
                .first
            if port == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        guard let port else {
            if process.isRunning { process.terminate() }
            throw DidNotStart(output: (try? String(contentsOf: log, encoding: .utf8)) ?? "")
        }
        self.port = port
    }

    struct DidNotStart: Error, CustomStringConvertible {
        let output: String
        var description: String { "sync-server did not start: \(output)" }
    }

    /// SIGKILL, as a crash; true once the process is gone (within ten seconds).
    func crash() -> Bool {
        kill(process.processIdentifier, SIGKILL)
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        return !process.isRunning
    }

    /// SIGTERM, then SIGKILL if it has not ended within ten seconds. Returns the exit status when
    /// it exited by itself (graceful shutdown), nil when it had to be killed or ended by a signal.
    @discardableResult
    func stop() -> Int32? {
        if process.isRunning {
            process.terminate()
            let deadline = Date().addingTimeInterval(10)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                return nil
            }
        }
        process.waitUntilExit()
        return process.terminationReason == .exit ? process.terminationStatus : nil
    }
}

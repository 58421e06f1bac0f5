import Foundation
import Testing

/// The built `sync-server` binary running as a real process on 127.0.0.1, port 0.
final class ServerProcess {
    let process = Process()
    let port: Int
    let pin: String?
    private let output: FileHandle

    /// The binary: `$SYNC_SERVER_BIN`, else next to the test bundle (`.build/<config>/sync-server`).
    static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["SYNC_SERVER_BIN"] { return URL(fileURLWithPath: path) }
        var directory = Bundle.main.bundleURL
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("sync-server")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(".build/debug/sync-server")
    }

    /// Starts the server on `dataDirectory` and waits (up to 60 s) for its "listening on" line.
    init(dataDirectory: URL, arguments: [String] = []) async throws {
        let stdout = Pipe()
        process.executableURL = Self.binary
        process.arguments = ["--host", "127.0.0.1", "--port", "0", "--data-dir", dataDirectory.path] + arguments
        process.standardOutput = stdout
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        process.environment = ProcessInfo.processInfo.environment.merging(["LOG_LEVEL": "warning"]) { $1 }
        try process.run()
        output = stdout.fileHandleForReading
        var pin: String?
        var port: Int?
        var text = ""
        let deadline = ContinuousClock.now + .seconds(60)
        let handle = output
        while port == nil {
            guard ContinuousClock.now < deadline, process.isRunning || !text.isEmpty else { break }
            let chunk = await Task.detached { handle.availableData }.value
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
            for line in text.split(separator: "\n") {
                if line.hasPrefix("sync-server: pin ") { pin = String(line.dropFirst("sync-server: pin ".count)) }
                if line.hasPrefix("sync-server: listening on "), let colon = line.lastIndex(of: ":") {
                    port = Int(line[line.index(after: colon)...])
                }
            }
        }
        guard let port else {
            process.terminate()
            throw ServerDidNotStart(output: text)
        }
        self.port = port
        self.pin = pin
    }

    struct ServerDidNotStart: Error { let output: String }

    func kill(_ signal: Int32) {
        Foundation.kill(process.processIdentifier, signal)
    }

    /// Waits for the process to end (up to `timeout`); returns its exit status, nil if it did not end.
    func waitForExit(timeout: Duration = .seconds(30)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else { return nil }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return process.terminationStatus
    }

    deinit {
        if process.isRunning {
            Foundation.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

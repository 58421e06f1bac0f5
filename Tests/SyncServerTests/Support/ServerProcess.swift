import Foundation
import ProcessTesting
import Testing

/// The built `sync-server` binary running as a real process on 127.0.0.1, port 0.
final class ServerProcess {
    private let child: ChildProcess
    let port: Int
    let pin: String?

    /// The binary: `$SYNC_SERVER_BIN`, else beside the test bundle.
    static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["SYNC_SERVER_BIN"] { return URL(fileURLWithPath: path) }
        return BuiltProducts.directory(containing: "sync-server").appendingPathComponent("sync-server")
    }

    /// Starts the server on `dataDirectory` and waits (up to 60 s) for its "listening on" line.
    init(dataDirectory: URL, arguments: [String] = []) async throws {
        child = try ChildProcess(
            Self.binary, ["--host", "127.0.0.1", "--port", "0", "--data-dir", dataDirectory.path] + arguments,
            environment: ["LOG_LEVEL": "warning"])
        do {
            try await child.waitForOutput(containing: "sync-server: listening on ")
        } catch {
            child.stop()
            throw ServerDidNotStart(output: child.stdout + child.stderr)
        }
        // The pin line comes before the listening line.
        let lines = child.stdout.split(separator: "\n")
        pin = lines.first { $0.hasPrefix("sync-server: pin ") }.map { String($0.dropFirst("sync-server: pin ".count)) }
        guard let listening = lines.first(where: { $0.hasPrefix("sync-server: listening on ") }),
            let colon = listening.lastIndex(of: ":"), let port = Int(listening[listening.index(after: colon)...])
        else {
            child.stop()
            throw ServerDidNotStart(output: child.stdout)
        }
        self.port = port
    }

    struct ServerDidNotStart: Error { let output: String }

    func kill(_ signal: Int32) {
        child.signal(signal)
    }

    /// Waits for the process to end (up to `timeout`); returns its exit status, nil if it did not end.
    func waitForExit(timeout: Duration = .seconds(30)) async -> Int32? {
        try? await child.waitForExit(timeout: timeout).status
    }

    deinit {
        child.stop()
    }
}

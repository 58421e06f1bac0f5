import Foundation

/// A real `sync-server` process on 127.0.0.1, the one every test suite starts: on SQLite in a
/// temporary data directory, or on a PostgreSQL database; port 0 (any free port) unless given.
/// Its URL, port and certificate pin are read from the lines it prints when it listens.
public final class TestServer: Sendable {
    /// The binary: `$SYNC_SERVER_BIN`, else the built product beside the test bundle.
    public static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["SYNC_SERVER_BIN"] { return URL(fileURLWithPath: path) }
        return BuiltProducts.directory(containing: "sync-server").appendingPathComponent("sync-server")
    }

    /// The rate limits a test that signs in and creates accounts many times needs lifted; a test of
    /// the limits themselves passes `relaxedRateLimits: false`.
    public static let relaxedRateLimits = [
        "--sign-in-attempts-per-account", "10000", "--sign-in-attempts-per-address", "10000", "--account-creations-per-address", "10000",
    ]

    public let dataDirectory: URL
    /// `https://127.0.0.1:PORT`, or `http://…` with `insecure`.
    public let url: String
    public let port: Int
    /// The `sha256/…` pin of the server's certificate; nil for a plain-HTTP server.
    public let pin: String?
    private let process: ChildProcess

    /// Starts a server on `dataDirectory` (its SQLite files, and its TLS certificate unless
    /// `insecure`), or on the PostgreSQL `database` URL when one is given, and waits (at most a
    /// minute) until it listens. `options` are further `sync-server` options (limits, the
    /// collection schedule).
    public init(
        dataDirectory: URL, database: String? = nil, port: Int = 0, insecure: Bool = false, relaxedRateLimits: Bool = true,
        options: [String] = []
    ) async throws {
        self.dataDirectory = dataDirectory
        var arguments = ["--host", "127.0.0.1", "--port", "\(port)", "--data-dir", dataDirectory.path]
        if let database { arguments += ["--database", database] }
        if insecure { arguments.append("--insecure-http") }
        if relaxedRateLimits { arguments += Self.relaxedRateLimits }
        arguments += options
        process = try ChildProcess(Self.binary, arguments, environment: ["LOG_LEVEL": "warning"])
        do {
            try await process.waitForOutput(containing: "sync-server: listening on ")
        } catch {
            process.stop()
            throw ProcessFailure("sync-server did not start: \(process.stdout)\(process.stderr)")
        }
        // The pin line comes before the listening line.
        let lines = process.stdout.split(separator: "\n")
        guard let listening = lines.first(where: { $0.hasPrefix("sync-server: listening on ") }),
            let urlText = listening.split(separator: " ").last.map(String.init),
            let portText = urlText.split(separator: ":").last, let port = Int(portText)
        else {
            process.stop()
            throw ProcessFailure("cannot read the server's URL from: \(process.stdout)")
        }
        url = urlText
        self.port = port
        pin = lines.first { $0.hasPrefix("sync-server: pin ") }.map { String($0.dropFirst("sync-server: pin ".count)) }
    }

    public var isRunning: Bool { process.isRunning }

    /// What the server printed so far.
    public var stdout: String { process.stdout }

    public func signal(_ signal: Int32) {
        process.signal(signal)
    }

    /// Waits for the process to end (at most `timeout`): its exit status (for a signal, the
    /// signal's number, as Foundation reports it), or nil when it did not end in time (it is then
    /// killed).
    public func waitForExit(timeout: Duration = .seconds(30)) async -> Int32? {
        guard let result = try? await process.waitForExit(timeout: timeout) else { return nil }
        return result.status
    }

    /// A crash: SIGKILL, no chance to clean up; returns once the process is gone (at most a minute).
    public func kill9() async throws {
        process.stop()
        let deadline = ContinuousClock.now + .seconds(60)
        while process.isRunning {
            guard ContinuousClock.now < deadline else { throw ProcessFailure("the killed server did not exit within a minute") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Stops the server at once (SIGKILL), whatever state it is in: the end of a test.
    public func stop() {
        process.stop()
    }

    deinit {
        process.stop()
    }
}

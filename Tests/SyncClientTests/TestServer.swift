import Foundation
import ProcessTesting

/// A real `sync-server` on 127.0.0.1 with a temporary data directory.
final class TestServer: Sendable {
    let dataDirectory: URL
    let url: String
    let pin: String?
    let port: Int
    private let process: ChildProcess

    /// Starts a server (port 0: any free port, unless `port` is given) and reads its URL and pin;
    /// `options` are further `sync-server` options (limits, collection schedule).
    init(dataDirectory: URL, port: Int = 0, insecure: Bool = false, options: [String] = []) async throws {
        self.dataDirectory = dataDirectory
        var arguments = [
            "--host", "127.0.0.1", "--port", "\(port)", "--data-dir", dataDirectory.path,
            "--sign-in-attempts-per-account", "10000", "--sign-in-attempts-per-address", "10000",
            "--account-creations-per-address", "10000",
        ]
        if insecure { arguments.append("--insecure-http") }
        arguments += options
        process = try ChildProcess(Products.syncServer, arguments, environment: ["LOG_LEVEL": "warning"])
        do {
            try await process.waitForOutput(containing: "listening on ")
        } catch {
            process.stop()
            throw error
        }
        let lines = process.stdout.split(separator: "\n")
        guard let listening = lines.first(where: { $0.contains("listening on ") }),
            let urlText = listening.split(separator: " ").last.map(String.init),
            let portText = urlText.split(separator: ":").last, let port = Int(portText)
        else { throw TestFailure("cannot read the server's URL from: \(process.stdout)") }
        url = urlText
        self.port = port
        pin = lines.first(where: { $0.contains("pin sha256/") }).flatMap { $0.split(separator: " ").last.map(String.init) }
    }

    /// Kills the server without any chance to clean up (SIGKILL) and waits until it is gone.
    func kill9() async throws {
        process.stop()
        try await eventually(timeout: .seconds(60), "the killed server to exit") { !self.process.isRunning }
    }

    var isRunning: Bool { process.isRunning }

    func stop() {
        process.signal(SIGTERM)
        process.stop()
    }
}

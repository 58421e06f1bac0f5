#if SYNCKEYCHAIN_NETWORK
import Foundation
import NIOSSL
import SyncClient

/// A real `sync-server` process on 127.0.0.1 and a free port, over its own data directory.
///
/// Sign-in rate limits and the per-account item limit are raised: the benchmark enrols many
/// devices from one address and fills a 100,000-item account. Call ``stop()`` when done.
final class BenchServer: Sendable {
    let process: ChildProcess
    /// The base URL, `https://127.0.0.1:PORT` (or `http://` with `insecure`).
    let url: String
    /// The server's public-key pin (nil over plain HTTP).
    let pin: String?

    /// Starts a server; `options` are further `sync-server` options.
    init(_ executables: Executables, directory: URL, database: String? = nil, insecure: Bool = false, options: [String] = []) async throws {
        let data = directory.appendingPathComponent("server-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        var arguments = [
            "--host", "127.0.0.1", "--port", "0", "--data-dir", data.path,
            "--max-items-per-account", "1000000",
            "--sign-in-attempts-per-account", "100000", "--sign-in-attempts-per-address", "100000", "--account-creations-per-address", "100000",
        ]
        if let database { arguments += ["--database", database] }
        if insecure { arguments.append("--insecure-http") }
        arguments += options
        let process = try ChildProcess(
            executables.server, arguments, environment: ["LOG_LEVEL": "warning"], log: directory.appendingPathComponent("server.log"))
        do {
            let listening = try await process.line(startingWith: "sync-server: listening on ")
            url = String(listening.dropFirst("sync-server: listening on ".count))
            pin = insecure ? nil : String(try await process.line(startingWith: "sync-server: pin ").dropFirst("sync-server: pin ".count))
        } catch {
            process.stop()
            throw error
        }
        self.process = process
        progress("sync-server pid \(process.pid) on \(url)")
    }

    /// The TLS configuration that trusts exactly this server's pinned key (nil over plain HTTP).
    func tlsConfiguration() async throws -> TLSConfiguration? {
        let endpoint = try ServerEndpoint(url, allowInsecure: pin == nil)
        return try await endpoint.verify(pin: pin.flatMap(ServerPin.init)).1?.configuration
    }

    func stop() { process.stop() }
}
#endif

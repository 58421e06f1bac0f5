import ArgumentParser
import Foundation
import Logging
import SyncServer

/// `sync-server [serve]`: runs the server (the default subcommand of ``SyncServerMain``).
struct SyncServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the server (the default: `sync-server --port …` is `sync-server serve --port …`).")

    @Option(help: "The address to listen on.") var host = "127.0.0.1"
    @Option(help: "The port to listen on (0: any free port, printed at start).") var port = 8443
    @Option(help: "The data directory: the SQLite database (unless --database is given) and the self-signed certificate.") var dataDir = "./sync-data"
    @Option(help: "A database URL instead of the embedded SQLite database (postgres://…).") var database: String?
    @Option(help: "The operator's PEM certificate chain.") var tlsCert: String?
    @Option(help: "The operator's PEM private key.") var tlsKey: String?
    @Flag(help: "Serve plain HTTP instead of HTTPS (only behind a TLS-terminating proxy).") var insecureHttp = false
    @Option(help: "The largest request body in bytes.") var maxRequestBytes = ServerConfiguration.Limits().maximumRequestBytes
    @Option(help: "The most items in one upload batch.") var maxBatchItems = ServerConfiguration.Limits().maximumBatchItems
    @Option(help: "The largest item blob in bytes.") var maxBlobBytes = ServerConfiguration.Limits().maximumBlobBytes
    @Option(help: "The most items per account.") var maxItemsPerAccount = ServerConfiguration.Limits().maximumItemsPerAccount
    @Option(help: "The most bytes of stored blobs per account (all versions, tombstones included).")
    var maxBytesPerAccount = ServerConfiguration.Limits().maximumBytesPerAccount
    @Option(help: "How long a silent device keeps holding tombstones back (90s, 15m, 1h, 30d).")
    var deviceInactivityLimit = WrittenDuration("30d")!
    @Option(help: "How often tombstones are collected, after a first pass at start (90s, 15m, 1h, 30d).")
    var tombstoneCollectionInterval = WrittenDuration("1h")!
    @Option(help: "The most push connections per account.")
    var maxPushConnections = ServerConfiguration.Limits().maximumPushConnectionsPerAccount
    @Option(help: "Failed sign-ins per account name from one client address per sign-in window.")
    var signInAttemptsPerAccount = ServerConfiguration.SignInRateLimit().attemptsPerAccount
    @Option(help: "Failed sign-ins per account name from all addresses per sign-in window (not applied to addresses that signed in before).")
    var signInFailuresPerAccount = ServerConfiguration.SignInRateLimit().failuresPerAccount
    @Option(help: "New accounts per client address per hour.")
    var accountCreationsPerAddress = ServerConfiguration.SignInRateLimit().accountCreationsPerAddress
    @Option(help: "Sign-in attempts per client address per sign-in window.")
    var signInAttemptsPerAddress = ServerConfiguration.SignInRateLimit().attemptsPerAddress
    @Option(help: "The window the sign-in limits count in (90s, 15m, 1h).")
    var signInWindow = WrittenDuration("1m")!
    @Option(help: "Failed bearer-token authentications per client address per minute.")
    var tokenFailuresPerAddress = ServerConfiguration.TokenFailureRateLimit().failuresPerAddress
    @Option(help: "The most connections open at once from one client address (an IPv6 client counts by its /64).")
    var maxConnectionsPerAddress = ServerConfiguration.Connections().maximumPerAddress
    @Option(help: "The most connections open at once from all clients together.")
    var maxConnections = ServerConfiguration.Connections().maximumTotal
    @Option(help: "How long a request head may take to arrive: from the connection's start (TLS handshake included), or from its first byte on a kept-alive connection (90s, 15m, 1h, 30d).")
    var headerTimeout = WrittenDuration("30s")!
    @Option(help: "How long a request body may take to arrive after its head (90s, 15m, 1h, 30d).")
    var bodyTimeout = WrittenDuration("2m")!
    @Option(help: "How long a kept-alive connection may wait for its next request, and a client leave an answer unread (90s, 15m, 1h, 30d).")
    var idleTimeout = WrittenDuration("90s")!

    func validate() throws {
        if (tlsCert == nil) != (tlsKey == nil) { throw ValidationError("--tls-cert and --tls-key go together") }
        if insecureHttp && tlsCert != nil { throw ValidationError("--insecure-http and --tls-cert exclude each other") }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0...65535") }
        guard maxConnections > 0, maxConnectionsPerAddress > 0 else {
            throw ValidationError("--max-connections and --max-connections-per-address must be at least 1")
        }
    }

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .info
            return handler
        }
        let logger = Logger(label: "sync-server")
        let directory = URL(fileURLWithPath: dataDir, isDirectory: true)
        let location: StorageLocation
        var servingLock: ServingLock?
        if let database {
            guard let url = URL(string: database) else { throw ValidationError("--database must be a URL") }
            location = .database(url)
        } else {
            location = .directory(directory)
            // Held while this process lives: `restore` refuses while a server serves the directory.
            servingLock = try ServingLock.serving(directory)
        }
        defer { withExtendedLifetime(servingLock) {} }
        let storage = try await location.open()
        var configuration = ServerConfiguration()
        configuration.limits.maximumRequestBytes = maxRequestBytes
        configuration.limits.maximumBatchItems = maxBatchItems
        configuration.limits.maximumBlobBytes = maxBlobBytes
        configuration.limits.maximumItemsPerAccount = maxItemsPerAccount
        configuration.limits.maximumBytesPerAccount = maxBytesPerAccount
        configuration.deviceInactivityLimit = deviceInactivityLimit.duration
        configuration.tombstoneCollectionInterval = tombstoneCollectionInterval.duration
        configuration.limits.maximumPushConnectionsPerAccount = maxPushConnections
        configuration.signInRateLimit.attemptsPerAccount = signInAttemptsPerAccount
        configuration.signInRateLimit.attemptsPerAddress = signInAttemptsPerAddress
        configuration.signInRateLimit.failuresPerAccount = signInFailuresPerAccount
        configuration.signInRateLimit.accountCreationsPerAddress = accountCreationsPerAddress
        configuration.signInRateLimit.window = TimeInterval(signInWindow.duration.components.seconds)
        configuration.tokenFailureRateLimit.failuresPerAddress = tokenFailuresPerAddress
        configuration.connections.maximumPerAddress = maxConnectionsPerAddress
        configuration.connections.maximumTotal = maxConnections
        configuration.connections.headerTimeout = headerTimeout.duration
        configuration.connections.bodyTimeout = bodyTimeout.duration
        configuration.connections.idleTimeout = idleTimeout.duration
        if let problem = Self.raiseDescriptorLimit(for: maxConnections) { Self.say("warning: \(problem)") }

        let tls: TLSIdentity?
        if insecureHttp {
            tls = nil
        } else if let tlsCert, let tlsKey {
            tls = try TLSIdentity(certificateFile: tlsCert, keyFile: tlsKey)
        } else {
            tls = try TLSIdentity.selfSigned(in: directory)
        }
        if let tls {
            for problem in tls.problems { Self.say("warning: \(problem)") }
        }
        let scheme = tls == nil ? "http" : "https"
        let host = host
        let pin = tls?.pin
        let application = try SyncApplication(storage: storage, configuration: configuration, logger: logger)
            .makeApplication(host: host, port: port, tls: tls) { port in
                // Once the port is bound: a server that cannot listen prints no pin (decision 0262).
                if let pin { Self.say("pin \(pin)") }
                let shown = host.contains(":") ? "[\(host)]" : host
                Self.say("listening on \(scheme)://\(shown):\(port)")
            }
        do {
            try await application.runService()
        } catch where SyncApplication.isAddressInUse(error) {
            throw OperatorError("port \(port) on \(host) is in use (another sync-server?); stop it or choose another --port")
        }
    }


    /// One line on stdout, flushed at once (tests and scripts read these lines).
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data("sync-server: \(line)\n".utf8))
    }
}

extension WrittenDuration: ExpressibleByArgument {
    package init?(argument: String) { self.init(argument) }
}

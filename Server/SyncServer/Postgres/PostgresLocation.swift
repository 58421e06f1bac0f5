import Foundation
import PostgresNIO

/// Where a PostgreSQL database is: parsed from the `--database postgres://…` URL.
///
/// Accepted form: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]`
/// (`postgresql://` too). `sslmode` defaults to `prefer`, like libpq. The password is kept out of
/// ``description`` so the URL can be logged.
package struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    package enum TLSMode: String, Sendable {
        case disable, prefer, require
    }

    package var host: String
    package var port: Int
    package var username: String
    package var password: String?
    package var database: String
    package var tlsMode: TLSMode

    package init(
        host: String, port: Int = 5432, username: String, password: String? = nil,
        database: String, tlsMode: TLSMode = .prefer
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.tlsMode = tlsMode
    }

    /// Parses a `postgres://` URL; `nil` when it is not one.
    package init?(url text: String) {
        guard let components = URLComponents(string: text),
              let scheme = components.scheme?.lowercased(),
              scheme == "postgres" || scheme == "postgresql",
              let host = components.host, !host.isEmpty
        else { return nil }
        let database = String(components.path.drop(while: { $0 == "/" }))
        var tlsMode = TLSMode.prefer
        if let mode = components.queryItems?.first(where: { $0.name == "sslmode" })?.value {
            guard let parsed = TLSMode(rawValue: mode) else { return nil }
            tlsMode = parsed
        }
        let username = components.user.flatMap { $0.removingPercentEncoding } ?? "postgres"
        self.init(
            host: host,
            port: components.port ?? 5432,
            username: username,
            password: components.password.flatMap { $0.removingPercentEncoding },
            database: database.isEmpty ? username : database,
            tlsMode: tlsMode
        )
    }

    /// The same server, another database (tests create one per test).
    package func with(database: String) -> PostgresLocation {
        var copy = self
        copy.database = database
        return copy
    }

    package var description: String {
        "postgres://\(username)@\(host):\(port)/\(database)"
    }

    /// The PostgresNIO client configuration for this location.
    package func clientConfiguration(maximumConnections: Int) -> PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS
        switch tlsMode {
        case .disable: tls = .disable
        case .prefer: tls = .prefer(.makeClientConfiguration())
        case .require: tls = .require(.makeClientConfiguration())
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: tls
        )
        configuration.options.maximumConnections = maximumConnections
        configuration.options.minimumConnections = 0
        return configuration
    }
}

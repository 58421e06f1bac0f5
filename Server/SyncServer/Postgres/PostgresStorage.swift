import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import SyncCore

/// The PostgreSQL backend of ``ServerStorage``: several `sync-server` processes may share one
/// database.
///
/// Its connection pool must run while it is used: the storage is a `Service` (``run()``), which
/// the server registers in its service group (``services``) apart from the change listener, so a
/// listener that fails or reconnects never takes the pool with it (decision 0066). Queries issued
/// before the pool runs wait for it.
///
/// Every value reaches PostgreSQL as a bind parameter (PostgresNIO turns `\(value)` in a
/// `PostgresQuery` into `$n`), never spliced into SQL text.
package final class PostgresStorage: ServerStorage, Service {
    package struct Configuration: Sendable {
        /// The most pooled connections this process opens (the change listener holds one of them).
        package var maximumConnections: Int

        package init(maximumConnections: Int = 16) {
            self.maximumConnections = maximumConnections
        }
    }

    let client: PostgresClient
    let logger: Logger

    /// A storage for `location`; call ``run()`` (or add it to the `ServiceGroup`) and then
    /// ``migrate()`` before using it.
    package init(location: PostgresLocation, configuration: Configuration = Configuration(), logger: Logger) {
        self.client = PostgresClient(
            configuration: location.clientConfiguration(maximumConnections: configuration.maximumConnections),
            backgroundLogger: logger
        )
        self.logger = logger
    }

    /// Opens the database at `url` for `sync-server --database postgres://…`: checks that it is
    /// reachable and brings its schema up to date (with a short-lived client, since nothing runs
    /// this storage's pool yet), then returns the storage.
    package static func open(_ url: URL) async throws -> any ServerStorage {
        guard let location = PostgresLocation(url: url.absoluteString) else {
            throw SyncServerError(.startupFailure, "the database URL is not a valid postgres:// URL")
        }
        let logger = Logger(label: "sync-server.postgres")
        let migrating = PostgresStorage(location: location, configuration: .init(maximumConnections: 1), logger: logger)
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await migrating.run() }
                defer { group.cancelAll() }
                try await migrating.migrate()
            }
        } catch {
            throw SyncServerError(
                .startupFailure, "cannot open the PostgreSQL database at \(location)", underlying: error)
        }
        return PostgresStorage(location: location, logger: logger)
    }

    /// Runs the connection pool until the task is cancelled or the service group shuts down (then
    /// at most `stopGrace` more); call it once.
    package func run() async {
        await client.run(stoppingWithin: Self.stopGrace)
    }

    package static let stopGrace = Duration.seconds(10)

    /// The connection pool (this storage itself), run by the application's service group.
    package var services: [any Service] { [self] }

    /// Applies the schema migrations this database lacks (safe to run from several processes at once).
    package func migrate() async throws {
        _ = try await attempt("migrate the schema") {
            try await PostgresMigrator(migrations: PostgresSchema.migrations).migrate(client, logger: logger)
        }
    }

    /// The schema versions this build knows, ascending.
    package static var schemaVersions: [Int] { PostgresSchema.migrations.map(\.version).sorted() }

    /// Runs `body`, turning any failure that is not already a ``SyncServerError`` into a
    /// `storageFailure` that says what was attempted and nothing about the values involved.
    func attempt<Result: Sendable>(_ what: String, _ body: () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch let error as SyncServerError {
            throw error
        } catch {
            logger.error("PostgreSQL storage failed", metadata: ["operation": "\(what)", "error": "\(error)"])
            throw SyncServerError(.storageFailure, "the database failed to \(what)", underlying: error)
        }
    }

    // MARK: Accounts

    package func createAccount(_ account: NewAccount, now: Date) async throws {
        let credentials = account.credentials
        let created = try await attempt("create an account") {
            try await client.query(
                """
                WITH account AS (
                    INSERT INTO accounts (id, name, verifier, kdf_parameters, salt, wrapped_account_key,
                                          wrapped_recovery_key, recovery_verifier, created_at)
                    VALUES (\(account.id.rawValue), \(account.name), \(ByteBuffer(bytes: credentials.verifier)),
                            \(ByteBuffer(bytes: credentials.kdfParameters)), \(ByteBuffer(bytes: credentials.salt)),
                            \(ByteBuffer(bytes: credentials.wrappedAccountKey)),
                            \(credentials.wrappedRecoveryKey.map { ByteBuffer(bytes: $0) }),
                            \(credentials.recoveryVerifier.map { ByteBuffer(bytes: $0) }), \(now))
                    ON CONFLICT DO NOTHING
                    RETURNING id
                )
                INSERT INTO account_sequences (account_id) SELECT id FROM account RETURNING account_id
                """,
                logger: logger
            ).collect().count
        }
        guard created == 1 else {
            throw SyncServerError(.accountExists, "an account with that name exists already")
        }
    }

    package func account(named name: String) async throws -> AccountRecord? {
        try await fetchAccount(where: "name = \(name)")
    }

    package func account(id: AccountID) async throws -> AccountRecord? {
        try await fetchAccount(where: "id = \(id.rawValue)")
    }

    private func fetchAccount(where condition: PostgresQuery) async throws -> AccountRecord? {
        var query: PostgresQuery = """
            SELECT id, name, verifier, kdf_parameters, salt, wrapped_account_key, wrapped_recovery_key, recovery_verifier,
                   created_at
            FROM accounts WHERE
            """
        query.sql += " " + condition.sql
        query.binds = condition.binds
        return try await attempt("read an account") {
            let rows = try await client.query(query, logger: logger)
            for try await (id, name, verifier, kdf, salt, wrapped, recovery, recoveryVerifier, createdAt) in rows.decode(
                (UUID, String, ByteBuffer, ByteBuffer, ByteBuffer, ByteBuffer, ByteBuffer?, ByteBuffer?, Date).self
            ) {
                return AccountRecord(
                    id: AccountID(id),
                    name: name,
                    credentials: AccountCredentials(
                        verifier: Array(buffer: verifier), kdfParameters: Array(buffer: kdf),
                        salt: Array(buffer: salt), wrappedAccountKey: Array(buffer: wrapped),
                        wrappedRecoveryKey: recovery.map { Array(buffer: $0) },
                        recoveryVerifier: recoveryVerifier.map { Array(buffer: $0) }
                    ),
                    createdAt: createdAt
                )
            }
            return nil
        }
    }

    package func replaceCredentials(of account: AccountID, with credentials: AccountCredentials) async throws {
        let updated = try await attempt("replace an account's credentials") {
            try await client.query(
                """
                UPDATE accounts SET verifier = \(ByteBuffer(bytes: credentials.verifier)),
                    kdf_parameters = \(ByteBuffer(bytes: credentials.kdfParameters)),
                    salt = \(ByteBuffer(bytes: credentials.salt)),
                    wrapped_account_key = \(ByteBuffer(bytes: credentials.wrappedAccountKey)),
                    wrapped_recovery_key = \(credentials.wrappedRecoveryKey.map { ByteBuffer(bytes: $0) }),
                    recovery_verifier = \(credentials.recoveryVerifier.map { ByteBuffer(bytes: $0) })
                WHERE id = \(account.rawValue)
                RETURNING id
                """,
                logger: logger
            ).collect().count
        }
        guard updated == 1 else { throw SyncServerError(.notFound, "no such account") }
    }
}

extension Array where Element == UInt8 {
    init(buffer: ByteBuffer) {
        self = Array(buffer.readableBytesView)
    }
}

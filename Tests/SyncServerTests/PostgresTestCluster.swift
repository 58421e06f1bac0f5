import Foundation
import Logging
import PostgresNIO
import SyncServer
import Testing

/// A real PostgreSQL for the tests: the server at `$SYNCKEYCHAIN_TEST_POSTGRES_URL` when it is set,
/// otherwise a throwaway cluster that `scripts/postgres-cluster.sh` starts for the suite and stops
/// (and removes) after it. Each test then works in a database of its own.
enum PostgresTestCluster {
    @TaskLocal static var administration: PostgresLocation?

    /// The server `SYNCKEYCHAIN_TEST_POSTGRES_URL` names, or nil when it is unset.
    static let configuredAdministration: PostgresLocation? = {
        guard let url = ProcessInfo.processInfo.environment["SYNCKEYCHAIN_TEST_POSTGRES_URL"], !url.isEmpty else {
            return nil
        }
        return PostgresLocation(url: url)
    }()

    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Runs `body` with a fresh, empty database, dropped afterwards.
    static func withFreshDatabase<Result: Sendable>(
        _ body: (PostgresLocation) async throws -> Result
    ) async throws -> Result {
        let administration = try #require(administration, "use the .postgresCluster trait on the suite")
        let name = "synckeychain_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        // Identifiers cannot be bind parameters; `name` is generated here from hex digits only.
        _ = try await withClient(administration) { client in
            try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
        }
        do {
            let result = try await body(administration.with(database: name))
            try await drop(name, on: administration)
            return result
        } catch {
            try? await drop(name, on: administration)
            throw error
        }
    }

    private static func drop(_ name: String, on administration: PostgresLocation) async throws {
        _ = try await withClient(administration) { client in
            try await client.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"))
        }
    }

    /// Runs `body` with a running PostgresNIO client for `location`, shut down afterwards.
    static func withClient<Result: Sendable>(
        _ location: PostgresLocation,
        _ body: (PostgresClient) async throws -> Result
    ) async throws -> Result {
        let client = PostgresClient(configuration: location.clientConfiguration(maximumConnections: 4))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run(stoppingWithin: PostgresStorage.stopGrace) }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }

    /// A storage on `location` (small pool: many tests share the server), not yet running.
    static func makeStorage(_ location: PostgresLocation) -> PostgresStorage {
        var logger = Logger(label: "test.postgres")
        logger.logLevel = .error
        return PostgresStorage(location: location, configuration: .init(maximumConnections: 4), logger: logger)
    }

    /// Runs `body` with a migrated storage on `location` whose connection pool runs meanwhile.
    static func withStorage<Result: Sendable>(
        _ location: PostgresLocation, _ body: (PostgresStorage) async throws -> Result
    ) async throws -> Result {
        let storage = makeStorage(location)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await storage.run() }
            defer { group.cancelAll() }
            try await storage.migrate()
            return try await body(storage)
        }
    }

    /// Runs `scripts/postgres-cluster.sh` and returns its standard output.
    ///
    /// Through popen/pclose rather than Foundation's `Process`: pclose reaps the script itself, so
    /// nothing depends on the SIGCHLD monitoring that the test process's other threads can starve.
    static func runClusterScript(_ arguments: [String]) throws -> String {
        let script = repositoryRoot.appendingPathComponent("scripts/postgres-cluster.sh").path
        let command = ([ "/bin/bash", script] + arguments).map(shellQuoted).joined(separator: " ")
        guard let stream = popen(command, "r") else {
            throw ClusterScriptFailed(arguments: arguments, status: -1)
        }
        var output = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, stream)
            if count <= 0 { break }
            output += buffer[0..<count]
        }
        let status = pclose(stream)
        guard status == 0 else { throw ClusterScriptFailed(arguments: arguments, status: status) }
        return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func shellQuoted(_ argument: String) -> String {
        "'" + argument.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    struct ClusterScriptFailed: Error, CustomStringConvertible {
        var arguments: [String]
        var status: Int32
        var description: String { "postgres-cluster.sh \(arguments.first ?? "") exited with \(status)" }
    }
}

/// Gives a suite a real PostgreSQL (see ``PostgresTestCluster``) for all of its tests.
struct PostgresClusterTrait: SuiteTrait, TestScoping {
    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: () async throws -> Void
    ) async throws {
        if let url = ProcessInfo.processInfo.environment["SYNCKEYCHAIN_TEST_POSTGRES_URL"], !url.isEmpty {
            let location = try #require(PostgresLocation(url: url), "SYNCKEYCHAIN_TEST_POSTGRES_URL is not a postgres:// URL")
            try await PostgresTestCluster.$administration.withValue(location, operation: function)
            return
        }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("synckeychain-pg-\(UUID().uuidString)").path
        do {
            let url = try PostgresTestCluster.runClusterScript(["start", directory])
            let location = try #require(PostgresLocation(url: url))
            try await PostgresTestCluster.$administration.withValue(location, operation: function)
        } catch {
            _ = try? PostgresTestCluster.runClusterScript(["stop", directory])
            throw error
        }
        _ = try PostgresTestCluster.runClusterScript(["stop", directory])
    }
}

extension Trait where Self == PostgresClusterTrait {
    /// A real PostgreSQL for the suite's tests.
    static var postgresCluster: Self { Self() }
}

extension Sequence {
    /// `map` with an async transform, one element after the other.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}

extension AsyncSequence {
    /// Every element, in order.
    func elements() async throws -> [Element] {
        var elements: [Element] = []
        for try await element in self { elements.append(element) }
        return elements
    }
}

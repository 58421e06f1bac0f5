import Foundation

/// A PostgreSQL database of its own for a test that starts `sync-server` processes on it: created
/// on the server `$SYNCKEYCHAIN_TEST_POSTGRES_URL` names (scripts/test.sh starts one), else on a
/// throwaway cluster that `scripts/postgres-cluster.sh` starts for the test and removes after it;
/// the database is dropped afterwards. `body` gets its `postgres://` URL.
public func withPostgresDatabase<T>(_ body: (String) async throws -> T) async throws -> T {
    if let administration = ProcessInfo.processInfo.environment["SYNCKEYCHAIN_TEST_POSTGRES_URL"], !administration.isEmpty {
        return try await PostgresDatabase.withDatabase(on: administration, body)
    }
    let cluster = FileManager.default.temporaryDirectory.appendingPathComponent("synckeychain-pg-\(UUID().uuidString)").path
    defer { _ = try? PostgresDatabase.clusterScript(["stop", cluster]) }
    let administration = try PostgresDatabase.clusterScript(["start", cluster])
    return try await PostgresDatabase.withDatabase(on: administration, body)
}

enum PostgresDatabase {
    static func withDatabase<T>(on administration: String, _ body: (String) async throws -> T) async throws -> T {
        // Identifiers cannot be bind parameters; the name is made here of hex digits only.
        let name = "synckeychain_process_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        guard let slash = administration.lastIndex(of: "/") else { throw TestFailure("not a postgres:// URL: \(administration)") }
        try await psql(administration, "CREATE DATABASE \(name)")
        let drop = "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"
        let result: T
        do {
            result = try await body(String(administration[..<slash]) + "/" + name)
        } catch {
            try? await psql(administration, drop)
            throw error
        }
        try await psql(administration, drop)
        return result
    }

    static func psql(_ url: String, _ command: String) async throws {
        let result = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/psql"), [url, "-v", "ON_ERROR_STOP=1", "-qc", command])
        guard result.status == 0 else { throw TestFailure("psql \(command) failed: \(result.stderr)") }
    }

    /// Runs `scripts/postgres-cluster.sh` (it may install PostgreSQL) and returns its last line.
    static func clusterScript(_ arguments: [String]) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let result = try ChildProcess.runBlocking(
            URL(fileURLWithPath: "/bin/bash"), [root.appendingPathComponent("scripts/postgres-cluster.sh").path] + arguments,
            timeout: .seconds(600))
        guard result.status == 0, let line = result.stdout.split(separator: "\n").last else {
            throw TestFailure("postgres-cluster.sh \(arguments.first ?? "") failed: \(result.stderr)")
        }
        return String(line)
    }
}

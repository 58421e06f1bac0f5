#if SYNCKEYCHAIN_NETWORK
import Foundation

/// The PostgreSQL the PostgreSQL figures run against: `$SYNCKEYCHAIN_BENCH_POSTGRES_URL` when set,
/// else a throwaway cluster started with the repository's `scripts/postgres-cluster.sh` (stopped
/// and removed by ``release()``). Neither available: the figure is reported as not run.
struct PostgresCluster: Sendable {
    static let environmentVariable = "SYNCKEYCHAIN_BENCH_POSTGRES_URL"

    let url: String
    private let clusterDirectory: URL?
    private let script: URL?

    static func acquire(in directory: URL) throws -> PostgresCluster {
        if let url = ProcessInfo.processInfo.environment[environmentVariable], !url.isEmpty {
            return PostgresCluster(url: url, clusterDirectory: nil, script: nil)
        }
        let script = Executables.repositoryRoot.appendingPathComponent("scripts/postgres-cluster.sh")
        guard FileManager.default.fileExists(atPath: script.path) else {
            throw BenchmarkUnavailable("no PostgreSQL: set \(environmentVariable) (no \(script.path) to start one)")
        }
        let cluster = directory.appendingPathComponent("postgres")
        let output: String
        do {
            output = try ChildProcess.run(
                URL(fileURLWithPath: "/bin/bash"), [script.path, "start", cluster.path],
                log: directory.appendingPathComponent("postgres-cluster.log"))
        } catch {
            _ = try? ChildProcess.run(
                URL(fileURLWithPath: "/bin/bash"), [script.path, "stop", cluster.path], log: directory.appendingPathComponent("postgres-cluster.log"))
            throw BenchmarkUnavailable("no PostgreSQL: set \(environmentVariable), or make scripts/postgres-cluster.sh work (\(error))")
        }
        guard let url = output.split(separator: "\n").last(where: { $0.hasPrefix("postgres://") }) else {
            throw BenchmarkUnavailable("no PostgreSQL: postgres-cluster.sh printed no URL")
        }
        return PostgresCluster(url: String(url), clusterDirectory: cluster, script: script)
    }

    /// Stops and removes a cluster this benchmark started; leaves a given URL alone.
    func release() {
        guard let clusterDirectory, let script else { return }
        _ = try? ChildProcess.run(
            URL(fileURLWithPath: "/bin/bash"), [script.path, "stop", clusterDirectory.path],
            log: clusterDirectory.deletingLastPathComponent().appendingPathComponent("postgres-cluster.log"))
    }
}
#endif

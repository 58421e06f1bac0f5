#if SYNCKEYCHAIN_NETWORK
import Foundation
import NIOCore
import SyncProtocol

/// Figures of the sync server, each against a real `sync-server` process on loopback: accepted
/// item writes per second (SQLite and PostgreSQL) and the change feed's cost in a large account.
enum ServerFigures {
    static let uploaders = 4
    static let batchSize = 200

    static let sqliteWrites = writes(backend: "SQLite", target: 5_000) { _ in (nil, {}) }

    static let postgresWrites = writes(backend: "PostgreSQL", target: 3_000) { directory in
        let cluster = try PostgresCluster.acquire(in: directory)
        return (cluster.url, { cluster.release() })
    }

    /// Several uploaders, each a device of its own account, send batches of sealed items as fast
    /// as the server answers; one sample is every uploader's batches, timed from first send to last
    /// answer. The load generator shares the machine's cores with the server.
    static func writes(
        backend: String, target: Double, database: @escaping @Sendable (URL) throws -> (url: String?, release: @Sendable () -> Void)
    ) -> Benchmark {
        let name = "server accepted item writes/s, \(backend)"
        let row = Benchmark.Row(name: name, unit: "items/s", target: .throughputAtLeast(target))
        return Benchmark(name: name, rows: [row]) { scale, directory in
            let executables = try Executables.located()
            let (url, release) = try database(directory)
            defer { release() }
            let server = try await BenchServer(executables, directory: directory, database: url, insecure: true)
            defer { server.stop() }
            let client = LoadClient(baseURL: server.url, tls: nil, connections: uploaders)
            return try await closing(client) {
                var accounts: [BenchAccount] = []
                for index in 0..<uploaders {
                    accounts.append(try await BenchAccount.createWithoutKDF(name: "writer-\(index)-\(UUID().uuidString.prefix(8))", client: client))
                }
                return try await measureWrites(name: name, target: row.target, accounts: accounts, client: client, scale: scale)
            }
        }
    }

    private static func measureWrites(
        name: String, target: Figure.Target, accounts: [BenchAccount], client: LoadClient, scale: Scale
    ) async throws -> [Figure] {
        let perSample = scale.writeBatches * batchSize
        progress("sealing \((scale.writeSamples + 1) * perSample * accounts.count) items")
        // Sealed and encoded before the clock starts; sample 0 warms the server up.
        let batches = try accounts.map { account in
            try (0...scale.writeSamples).map { sample in
                try account.sealedBatches(sample * perSample..<(sample + 1) * perSample, prefix: "w", batchSize: batchSize)
            }
        }
        progress("uploading")
        var rates: [Double] = []
        for sample in 0...scale.writeSamples {
            let start = ContinuousClock.now
            let applied = try await withThrowingTaskGroup(of: Int.self) { group in
                for (index, account) in accounts.enumerated() {
                    group.addTask { try await client.upload(batches[index][sample], token: account.token, concurrency: 1).applied }
                }
                return try await group.reduce(0, +)
            }
            let seconds = (ContinuousClock.now - start).seconds
            if sample > 0 { rates.append(Double(applied) / seconds) }
            progress("sample \(sample): \(Int(Double(applied) / seconds)) items/s")
        }
        return [Figure(
            name: name, unit: "items/s", product: Statistics(rates), baselineName: nil, baseline: nil, target: target,
            note: "\(accounts.count) uploaders (one account each), batches of \(batchSize), \(perSample * accounts.count) items per sample, plain HTTP")]
    }

    static let changesSinceCursor = Benchmark(
        name: "changes-since-cursor",
        rows: [.init(name: "changes-since-cursor, 10 changes", unit: "ms", target: .timeRatioAtMost(1.5))]
    ) { scale, directory in
        let executables = try Executables.located()
        let server = try await BenchServer(executables, directory: directory, insecure: true)
        defer { server.stop() }
        let client = LoadClient(baseURL: server.url, tls: nil, connections: 2)
        return try await closing(client) {
            progress("filling a \(scale.feedItems)-item account")
            let large = try await FeedAccount(filledWith: scale.feedItems, server: server, client: client, directory: directory)
            let small = try await FeedAccount(filledWith: 100, server: server, client: client, directory: directory)
            progress("timing")
            let sampler = TimeSampler(samples: scale.samples, iterations: scale.iterations / 20)
            let (product, baseline) = try await sampler.compare(
                product: { index in try await large.fetchChanges(client, check: index == 0) },
                baseline: { index in try await small.fetchChanges(client, check: index == 0) })
            return [Figure(
                name: "changes-since-cursor, 10 changes, \(scale.feedItems)-item account", unit: "ms", product: product,
                baselineName: "same in a 100-item account", baseline: baseline, target: .timeRatioAtMost(1.5),
                note: "one GET over loopback HTTP per call")]
        }
    }

    /// An account holding `items` items and then 10 more changes, and the cursor just before them.
    struct FeedAccount {
        let account: BenchAccount
        let cursor: UInt64

        init(filledWith items: Int, server: BenchServer, client: LoadClient, directory: URL) async throws {
            account = try await BenchAccount.createWithoutKDF(name: "feed-\(items)-\(UUID().uuidString.prefix(8))", client: client)
            _ = try await client.upload(account.sealedBatches(0..<items, prefix: "f", batchSize: 500), token: account.token, concurrency: 2)
            let (_, latest) = try await client.upload(account.sealedBatches(items..<items + 10, prefix: "f", batchSize: 10), token: account.token, concurrency: 1)
            cursor = latest - 10
        }

        func fetchChanges(_ client: LoadClient, check: Bool) async throws {
            let body = try await client.send(.GET, "/v1/zones/keychain/changes?after=\(cursor)", token: account.token)
            guard check else { return }
            let page = try WireCoding.makeDecoder().decode(ChangesResponse.self, from: Data(body.readableBytesView))
            guard page.items.count == 10, !page.hasMore else { throw BenchmarkError("expected 10 changes, got \(page.items.count)") }
        }
    }
}

/// Runs `body`, then shuts `client` down, whether or not `body` threw.
func closing<T>(_ client: LoadClient, _ body: () async throws -> T) async throws -> T {
    do {
        let result = try await body()
        await client.shutdown()
        return result
    } catch {
        await client.shutdown()
        throw error
    }
}
#endif

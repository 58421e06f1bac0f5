#if SYNCKEYCHAIN_NETWORK
import Foundation
import HummingbirdWSClient
import Logging
import Synchronization

/// Load figures for operators (reported, not judged): two `sync-server` processes on one
/// PostgreSQL (accepted writes/s with uploaders on both, and propagation from a write on one to a
/// push on the other), and many push subscribers on one process (time from a write to every
/// subscriber's notification).
enum ScaleOutFigures {
    static let twoProcesses = Benchmark(
        name: "two processes on one PostgreSQL",
        rows: [
            .init(name: "two processes on one PostgreSQL: accepted item writes/s", unit: "items/s", target: .report),
            .init(name: "two processes on one PostgreSQL: propagation write -> push", unit: "ms", target: .report),
        ]
    ) { scale, directory in
        let executables = try Executables.located()
        let cluster = try PostgresCluster.acquire(in: directory)
        defer { cluster.release() }
        let first = try await BenchServer(executables, directory: directory, database: cluster.url, insecure: true)
        defer { first.stop() }
        let second = try await BenchServer(executables, directory: directory, database: cluster.url, insecure: true)
        defer { second.stop() }
        let clients = [LoadClient(baseURL: first.url, tls: nil, connections: 2), LoadClient(baseURL: second.url, tls: nil, connections: 2)]
        return try await closing(clients[0]) { try await closing(clients[1]) { try await measureTwoProcesses(clients, second: second, scale: scale) } }
    }

    private static func measureTwoProcesses(_ clients: [LoadClient], second: BenchServer, scale: Scale) async throws -> [Figure] {

        // Writes: four uploaders, two on each process, each its own account.
        var uploaders: [(BenchAccount, LoadClient)] = []
        for index in 0..<4 {
            let client = clients[index % 2]
            uploaders.append((try await BenchAccount.createWithoutKDF(name: "scale-\(index)-\(UUID().uuidString.prefix(8))", client: client), client))
        }
        let perSample = scale.writeBatches * ServerFigures.batchSize
        let batches = try uploaders.map { account, _ in
            try (0...scale.writeSamples).map { sample in
                try account.sealedBatches(sample * perSample..<(sample + 1) * perSample, prefix: "s", batchSize: ServerFigures.batchSize)
            }
        }
        var rates: [Double] = []
        for sample in 0...scale.writeSamples {
            let start = ContinuousClock.now
            let applied = try await withThrowingTaskGroup(of: Int.self) { group in
                for (index, (account, client)) in uploaders.enumerated() {
                    group.addTask { try await client.upload(batches[index][sample], token: account.token, concurrency: 1).applied }
                }
                return try await group.reduce(0, +)
            }
            let rate = Double(applied) / (ContinuousClock.now - start).seconds
            if sample > 0 { rates.append(rate) }
            progress("two processes, sample \(sample): \(Int(rate)) items/s")
        }

        // Propagation: a device writes through the first process; another device of the account
        // is subscribed to pushes on the second.
        let account = try await BenchAccount.createWithoutKDF(name: "propagate-\(UUID().uuidString.prefix(8))", client: clients[0], devices: 2)
        let subscribers = PushSubscribers(count: 1)
        let latencies = try await subscribers.run(urls: [pushURL(second.url)], tokens: account.otherTokens) {
            let writes = try account.sealedBatches(0..<max(20, scale.propagationWrites * 4), prefix: "p", batchSize: 1)
            var samples: [Double] = []
            for write in writes {
                let before = subscribers.received
                let sent = ContinuousClock.now
                _ = try await clients[0].upload(write, token: account.token)
                let arrived = try await subscribers.waitForAll(after: before)
                samples.append((arrived[0] - sent).seconds * 1000)
            }
            return samples
        }
        return [
            Figure(
                name: "two processes on one PostgreSQL: accepted item writes/s", unit: "items/s", product: Statistics(rates),
                baselineName: nil, baseline: nil, target: .report,
                note: "4 uploaders (2 per process, one account each), batches of \(ServerFigures.batchSize), plain HTTP"),
            Figure(
                name: "two processes on one PostgreSQL: propagation write -> push", unit: "ms", product: Statistics(latencies),
                baselineName: nil, baseline: nil, target: .report,
                note: "one-item upload to process 1 until the WebSocket push arrives from process 2 (LISTEN/NOTIFY); n = \(latencies.count)"),
        ]
    }

    static let pushSubscribers = Benchmark(
        name: "push subscribers on one process",
        rows: [.init(name: "push subscribers on one process: write -> every notification", unit: "ms", target: .report)]
    ) { scale, directory in
        let executables = try Executables.located()
        // Every subscriber connects from 127.0.0.1, where devices in the field come from many
        // addresses: the per-address cap (128 by default) would refuse all but the first ones.
        let server = try await BenchServer(
            executables, directory: directory, insecure: true, options: ["--max-connections-per-address", "10000"])
        defer { server.stop() }
        let client = LoadClient(baseURL: server.url, tls: nil, connections: 4)
        return try await closing(client) { try await measurePush(client, server: server, scale: scale) }
    }

    private static func measurePush(_ client: LoadClient, server: BenchServer, scale: Scale) async throws -> [Figure] {
        let accountCount = scale.writeSamples > 2 ? 100 : 10
        let devicesPerAccount = 20
        progress("signing in \(accountCount * devicesPerAccount) devices")
        var created: [BenchAccount] = []
        for index in 0..<accountCount {
            created.append(try await BenchAccount.createWithoutKDF(
                name: "push-\(index)-\(UUID().uuidString.prefix(8))", client: client, devices: devicesPerAccount + 1))
        }
        let accounts = created
        let tokens = accounts.flatMap(\.otherTokens)
        let subscribers = PushSubscribers(count: tokens.count)
        let rounds = scale.writeSamples > 2 ? 10 : 3
        let latencies = try await subscribers.run(urls: [pushURL(server.url)], tokens: tokens) {
            var samples: [Double] = []
            for round in 0..<rounds {
                let before = subscribers.received
                let sent = ContinuousClock.now
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for account in accounts {
                        let write = try account.sealedBatches(round..<round + 1, prefix: "n", batchSize: 1)[0]
                        group.addTask { _ = try await client.upload(write, token: account.token) }
                    }
                    try await group.waitForAll()
                }
                let arrived = try await subscribers.waitForAll(after: before)
                samples += arrived.map { ($0 - sent).seconds * 1000 }
                progress("push round \(round): p99 \(Int(Statistics.quantile(samples, 0.99))) ms")
            }
            return samples
        }
        return [Figure(
            name: "push subscribers on one process (\(tokens.count)): write -> every notification", unit: "ms",
            product: Statistics(latencies), baselineName: nil, baseline: nil, target: .report,
            note: "\(accountCount) accounts x \(devicesPerAccount) WebSocket subscribers, one write per account per round, "
                + "\(rounds) rounds, from the first upload sent to each notification; SQLite, plain HTTP, "
                + "all from one address with the per-address connection cap lifted")]
    }

    private static func pushURL(_ base: String) -> String { base.replacingOccurrences(of: "http://", with: "ws://") + "/v1/push" }
}

/// WebSocket push subscribers, one per token, that record when each last heard from the server.
final class PushSubscribers: Sendable {
    private struct State {
        var connected = 0
        var arrivals: [ContinuousClock.Instant?]
        var counts: [Int]
    }

    private let state: Mutex<State>

    init(count: Int) { state = Mutex(State(arrivals: Array(repeating: nil, count: count), counts: Array(repeating: 0, count: count))) }

    /// Messages received so far, per subscriber.
    var received: [Int] { state.withLock { $0.counts } }

    /// Connects every subscriber, runs `body` once all are connected, then disconnects them.
    func run<T: Sendable>(urls: [String], tokens: [String], _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            for (index, token) in tokens.enumerated() {
                let url = urls[index % urls.count]
                group.addTask {
                    var configuration = WebSocketClientConfiguration()
                    configuration.additionalHeaders = [.authorization: "Bearer \(token)"]
                    let logger = Logger(label: "bench-push") { _ in SwiftLogNoOpLogHandler() }
                    try await WebSocketClient.connect(url: url, configuration: configuration, logger: logger) { inbound, _, _ in
                        self.state.withLock { $0.connected += 1 }
                        for try await _ in inbound {
                            let now = ContinuousClock.now
                            self.state.withLock { state in
                                state.arrivals[index] = now
                                state.counts[index] += 1
                            }
                        }
                    }
                    return nil
                }
            }
            group.addTask {
                let deadline = ContinuousClock.now + .seconds(120)
                while self.state.withLock({ $0.connected }) < tokens.count {
                    guard ContinuousClock.now < deadline else { throw BenchmarkError("push subscribers did not all connect") }
                    try await Task.sleep(for: .milliseconds(20))
                }
                return try await body()
            }
            while let next = try await group.next() {
                if let result = next {
                    group.cancelAll()
                    return result
                }
            }
            throw BenchmarkError("push subscribers ended early")
        }
    }

    /// Waits (up to 60 s) until every subscriber has received a message more than in `before`,
    /// and returns when each received its latest.
    func waitForAll(after before: [Int]) async throws -> [ContinuousClock.Instant] {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            let (counts, arrivals) = state.withLock { ($0.counts, $0.arrivals) }
            if zip(counts, before).allSatisfy({ $0 > $1 }) { return arrivals.compactMap { $0 } }
            guard ContinuousClock.now < deadline else { throw BenchmarkError("a push notification did not arrive within 60 s") }
            try await Task.sleep(for: .microseconds(200))
        }
    }
}
#endif

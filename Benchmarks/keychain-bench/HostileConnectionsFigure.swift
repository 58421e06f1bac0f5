#if SYNCKEYCHAIN_NETWORK
import Foundation

/// Legitimate devices syncing beside hostile connections (decision 0266): accounts of a writer and
/// a push subscriber each write one item a round, timed from the upload sent to the other device's
/// push (the push-subscriber figure's machinery), first alone, then while ``HostileClients`` hold
/// 1,000 connections open (100 in a quick run) that trickle bytes, send garbage or send nothing,
/// then alone again.
/// The p99 with them is judged against the p99 without them (at most 2×); once they end, the
/// server's open descriptors and resident memory are judged against what they were before, and
/// its memory after a second burst against after the first (what the allocator keeps, or a leak).
enum HostileConnectionsFigure {
    static let latencyRow = Benchmark.Row(
        name: "hostile connections: write → push p99 beside them", unit: "ms", target: .p99RatioAtMost(2))
    static let descriptorsRow = Benchmark.Row(
        name: "hostile connections: server descriptors once they end", unit: "fds", target: .ratioAtMost(1.1))
    static let memoryRow = Benchmark.Row(
        name: "hostile connections: server resident memory once they end", unit: "MiB", target: .ratioAtMost(1.25))
    /// Memory the allocator keeps once it has served a burst is used again by the next; memory lost
    /// per connection would grow with every burst.
    static let secondBurstRow = Benchmark.Row(
        name: "hostile connections: server resident memory after a second burst", unit: "MiB", target: .ratioAtMost(1.1))

    static let benchmark = Benchmark(name: "hostile connections", rows: [latencyRow, descriptorsRow, memoryRow, secondBurstRow]) { scale, directory in
        // One descriptor per hostile connection here and in the server, which inherits the limit.
        let limit = DescriptorLimit.raise()
        guard limit >= scale.hostileConnections + 1_000 else {
            throw BenchmarkUnavailable("the open-file limit is \(limit); \(scale.hostileConnections + 1_000) needed")
        }
        let executables = try Executables.located()
        let server = try await BenchServer(executables, directory: directory, insecure: true)
        defer { server.stop() }
        let client = LoadClient(baseURL: server.url, tls: nil, connections: scale.hostileAccounts)
        return try await closing(client) { try await measure(client, server: server, scale: scale) }
    }

    private static func measure(_ client: LoadClient, server: BenchServer, scale: Scale) async throws -> [Figure] {
        progress("signing in \(scale.hostileAccounts) accounts of two devices")
        var created: [BenchAccount] = []
        for index in 0..<scale.hostileAccounts {
            created.append(try await BenchAccount.createWithoutKDF(name: "steady-\(index)-\(UUID().uuidString.prefix(8))", client: client, devices: 2))
        }
        let accounts = created
        // Sealed before the clock starts: a warm-up round, then the rounds alone, beside them, and
        // alone again once they ended (the two alone phases together are the baseline, so neither
        // order nor drift favours one side).
        let roundCount = 1 + 3 * scale.hostileRounds
        let writes = try accounts.map { try $0.sealedBatches(0..<roundCount, prefix: "steady", batchSize: 1) }
        let subscribers = PushSubscribers(count: accounts.count)
        let port = try port(of: server.url)
        let hostile = HostileClients(port: port, count: scale.hostileConnections, addresses: max(1, scale.hostileConnections / 50))
        let url = server.url.replacingOccurrences(of: "http://", with: "ws://") + "/v1/push"

        return try await subscribers.run(urls: [url], tokens: accounts.map { $0.otherTokens[0] }) {
            let time = { @Sendable (range: Range<Int>) in
                try await timeRounds(range, writes: writes, accounts: accounts, client: client, subscribers: subscribers, pause: scale.hostileRoundPause)
            }
            _ = try await time(0..<1)
            let aloneBefore = try await time(1..<1 + scale.hostileRounds)
            progress("alone: p99 \(format(Statistics(aloneBefore).p99)) ms")
            let descriptorsBefore = try server.process.openDescriptors()
            let memoryBefore = try server.process.residentMemory().current

            hostile.start()
            let beside: [Double], descriptorsDuring: Int, memoryDuring: Double
            do {
                try await hostile.waitUntilOpen(hostile.held * 9 / 10, within: .seconds(120))
                progress("\(hostile.open) hostile connections open; server holds \(try server.process.openDescriptors()) descriptors")
                beside = try await time(1 + scale.hostileRounds..<1 + 2 * scale.hostileRounds)
                descriptorsDuring = try server.process.openDescriptors()
                memoryDuring = try server.process.residentMemory().current
            } catch {
                await hostile.stop()
                throw error
            }
            let made = hostile.connections
            progress("beside them: p99 \(format(Statistics(beside).p99)) ms; \(made) hostile connections made")

            await hostile.stop()
            let descriptorsAfter = try await settledDescriptors(server, baseline: descriptorsBefore)
            let memoryAfter = try server.process.residentMemory().current
            progress("ended: \(descriptorsAfter) descriptors (before \(descriptorsBefore)), \(format(memoryAfter)) MiB (before \(format(memoryBefore)))")
            let aloneAfter = try await time(1 + 2 * scale.hostileRounds..<roundCount)
            let alone = aloneBefore + aloneAfter
            progress("alone again: p99 \(format(Statistics(aloneAfter).p99)) ms")
            // A second burst tells memory the allocator keeps from memory each connection leaves.
            let second = HostileClients(port: port, count: scale.hostileConnections, addresses: max(1, scale.hostileConnections / 50))
            second.start()
            try? await second.waitUntilOpen(second.held * 9 / 10, within: .seconds(120))
            try? await Task.sleep(for: scale.hostileRoundPause * scale.hostileRounds / 4)
            await second.stop()
            _ = try await settledDescriptors(server, baseline: descriptorsBefore)
            let memoryAfterSecond = try server.process.residentMemory().current
            progress("after a second burst: \(format(memoryAfterSecond)) MiB")
            let load = "\(scale.hostileConnections) hostile connections (trickling a head, garbage, silent), \(made) made in all, "
                + "from \(max(1, scale.hostileConnections / 50)) addresses; default timeouts; plain HTTP"
            return [
                Figure(
                    name: "hostile connections: write → push p99, \(accounts.count) devices beside \(scale.hostileConnections)", unit: "ms",
                    product: Statistics(beside), baselineName: "same devices alone, before and after", baseline: Statistics(alone), target: latencyRow.target,
                    note: "one write per account per round, upload sent until the other device's push; \(load)"),
                Figure(
                    name: descriptorsRow.name, unit: "fds", product: Statistics([Double(descriptorsAfter)]),
                    baselineName: "before", baseline: Statistics([Double(descriptorsBefore)]), target: descriptorsRow.target,
                    note: "\(descriptorsDuring) while they were open"),
                Figure(
                    name: memoryRow.name, unit: "MiB", product: Statistics([memoryAfter]),
                    baselineName: "before", baseline: Statistics([memoryBefore]), target: memoryRow.target,
                    note: "\(format(memoryDuring)) MiB while they were open; VmRSS"),
                Figure(
                    name: secondBurstRow.name, unit: "MiB", product: Statistics([memoryAfterSecond]),
                    baselineName: "after the first", baseline: Statistics([memoryAfter]), target: secondBurstRow.target,
                    note: "as many hostile connections again, for a quarter of the first burst's time"),
            ]
        }
    }

    /// Runs `range`'s rounds, `pause` apart: every account uploads its write of the round at once;
    /// returns, for each write, the milliseconds from its upload sent to its other device's push.
    private static func timeRounds(
        _ range: Range<Int>, writes: [[EncodedBatch]], accounts: [BenchAccount], client: LoadClient, subscribers: PushSubscribers,
        pause: Duration
    ) async throws -> [Double] {
        var samples: [Double] = []
        for round in range {
            if round > range.lowerBound { try await Task.sleep(for: pause) }
            let before = subscribers.received
            let sent = try await withThrowingTaskGroup(of: (Int, ContinuousClock.Instant).self) { group in
                for (index, account) in accounts.enumerated() {
                    group.addTask {
                        let start = ContinuousClock.now
                        _ = try await client.upload(writes[index][round], token: account.token)
                        return (index, start)
                    }
                }
                var sent = Array(repeating: ContinuousClock.now, count: accounts.count)
                for try await (index, start) in group { sent[index] = start }
                return sent
            }
            let arrived = try await subscribers.waitForAll(after: before)
            samples += zip(arrived, sent).map { ($0 - $1).seconds * 1000 }
        }
        return samples
    }

    /// The server's descriptor count once it is back to `baseline` (polled for up to a minute: the
    /// server closes its side as it reads each end), or what it is after that minute.
    private static func settledDescriptors(_ server: BenchServer, baseline: Int) async throws -> Int {
        let deadline = ContinuousClock.now + .seconds(60)
        var count = try server.process.openDescriptors()
        while count > baseline && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            count = try server.process.openDescriptors()
        }
        return count
    }

    private static func port(of url: String) throws -> Int {
        guard let text = url.split(separator: ":").last, let port = Int(text) else { throw BenchmarkError("no port in \(url)") }
        return port
    }
}
#endif

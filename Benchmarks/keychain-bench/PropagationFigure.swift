#if SYNCKEYCHAIN_NETWORK
import Foundation
import KeychainCrypto
import KeychainModel
import KeychainStore

/// Propagation: with a `sync-client run` daemon on each of two devices, the time from starting
/// `keychain add-generic-password --sync` on one until the item is readable on the other.
///
/// The other device's keychain is polled every millisecond in this process through the same store
/// code `keychain find` runs (a process per poll would add its own start-up time to every
/// sample); the last item is then also read with a real `keychain find -w` process.
enum PropagationFigure {
    static let service = "com.example.bench.propagation"
    static let row = Benchmark.Row(name: "propagation, CLI write → readable on another device", unit: "ms", target: .latencyAtMost(median: 50, p99: 250))

    static let benchmark = Benchmark(name: "propagation", rows: [row]) { scale, directory in
        let executables = try Executables.located()
        let server = try await BenchServer(executables, directory: directory)
        defer { server.stop() }
        let device = DeviceRunner(
            executables: executables, server: server, account: "propagation-\(UUID().uuidString.prefix(8))", directory: directory)
        let writer = try device.newKeychainPath("writer")
        let reader = try device.newKeychainPath("reader")
        try device.enrol(keychain: writer, name: "bench-writer", createWithLogN: KDFParameters.minimumLogN)
        try device.enrol(keychain: reader, name: "bench-reader")
        let writerDaemon = try await device.startDaemon(keychain: writer)
        defer { writerDaemon.stop() }
        let readerDaemon = try await device.startDaemon(keychain: reader)
        defer { readerDaemon.stop() }
        let readerKeychain = try Keychain.open(at: reader)
        progress("daemons running; timing \(scale.propagationWrites) writes")

        // A first write, not counted, waits until both daemons hold their push connections.
        var latencies: [Double] = [], addTimes: [Double] = []
        for index in 0...scale.propagationWrites {
            let start = ContinuousClock.now
            try device.add(keychain: writer, service: service, account: "item-\(index)", password: "secret-\(index)")
            if index > 0 { addTimes.append((ContinuousClock.now - start).seconds * 1000) }
            try await waitUntilReadable(readerKeychain, account: "item-\(index)", expected: "secret-\(index)", within: index == 0 ? .seconds(120) : .seconds(30))
            if index > 0 { latencies.append((ContinuousClock.now - start).seconds * 1000) }
        }
        let last = "item-\(scale.propagationWrites)"
        guard try device.find(keychain: reader, service: service, account: last, sync: true) == "secret-\(scale.propagationWrites)" else {
            throw BenchmarkError("keychain find on the reader printed the wrong password")
        }
        return [Figure(
            name: "propagation, CLI write → readable on another device", unit: "ms", product: Statistics(latencies),
            baselineName: nil, baseline: nil, target: row.target,
            note: "two sync-client run daemons, TLS, loopback; includes the keychain add process (median \(format(Statistics(addTimes).median)) ms)")]
    }

    private static func waitUntilReadable(_ keychain: Keychain, account: String, expected: String, within limit: Duration) async throws {
        var attributes = ItemAttributes()
        attributes.service = service
        attributes.account = account
        let query = Query(itemClass: .genericPassword, attributes: attributes, synchronizable: .yes)
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if let data = try? keychain.findData(query) {
                guard data == Array(expected.utf8) else { throw BenchmarkError("the propagated item has the wrong password") }
                return
            }
            try await Task.sleep(for: .milliseconds(1))
        }
        throw BenchmarkError("\(account) was not readable on the other device within \(limit)")
    }
}
#endif

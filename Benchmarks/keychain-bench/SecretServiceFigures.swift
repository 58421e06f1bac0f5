import Foundation
import Synchronization

/// `keychain secret-service` against gnome-keyring-daemon in the same run (issue 14, decision
/// 0141): each provider's login collection holds `Scale.items` items (10,000 in the full run,
/// 100 in the quick one), then `secret-tool lookup` of one item by its attributes and
/// `secret-tool store` of a new one, a process each as a desktop script runs them, per second.
/// Each provider has a private session bus; gnome-keyring a private home too.
enum SecretServiceFigures {
    static let lookupRow = Benchmark.Row(
        name: "secret-tool lookups/s in a full login collection vs gnome-keyring", unit: "ops/s", target: .throughputRatioAtLeast(1))
    static let storeRow = Benchmark.Row(
        name: "secret-tool stores/s in a full login collection vs gnome-keyring", unit: "ops/s", target: .throughputRatioAtLeast(1))
    static let service = "com.example.bench"
    static let secret = "correct horse battery staple"

    /// One provider as `secret-tool` reaches it.
    struct Provider: Sendable {
        var secretTool: URL
        var environment: [String: String]
        var input: URL
        var log: URL

        /// Stores item `index` in the default collection, or in the one `collection` (an alias) names.
        func store(_ index: Int, in collection: String? = nil) throws {
            let target = collection.map { ["--collection=\($0)"] } ?? []
            _ = try ChildProcess.run(
                secretTool, ["store", "--label=bench \(index)"] + target + ["service", service, "account", "a\(index)"], environment: environment,
                input: input, log: log)
        }

        func lookup(_ index: Int) throws {
            let output = try ChildProcess.run(secretTool, ["lookup", "service", service, "account", "a\(index)"], environment: environment, log: log)
            guard output.hasPrefix(secret) else { throw BenchmarkError("secret-tool lookup found no secret for a\(index)") }
        }

        /// Stores items `0..<count`, four processes at a time (set-up, not measured).
        func fill(_ count: Int, in collection: String? = nil) throws {
            let failure = Mutex<String?>(nil)
            let workers = 4
            DispatchQueue.concurrentPerform(iterations: workers) { worker in
                for index in stride(from: worker, to: count, by: workers) where failure.withLock({ $0 == nil }) {
                    do { try store(index, in: collection) } catch { failure.withLock { $0 = "\(error)" } }
                }
            }
            if let failure = failure.withLock({ $0 }) { throw BenchmarkError("filling the collection failed: \(failure)") }
        }
    }

    static let benchmark = Benchmark(name: "Secret Service vs gnome-keyring", rows: [lookupRow, storeRow]) { scale, directory in
        let log = directory.appendingPathComponent("secret-service.log")
        let secretTool = try ProductBinary.onPath("secret-tool", package: "libsecret-tools")
        let input = try CompetitorFigures.inputFile(directory, "secret-service-secret", secret)
        let (bus, address) = try await CompetitorFigures.privateBus(directory, log: log)
        defer { bus.stop() }
        let keychain = directory.appendingPathComponent("secret-service/keychain.db").path
        let provider = try ChildProcess(
            try ProductBinary.located("keychain-secret-service"), ["--keychain", keychain], environment: ["DBUS_SESSION_BUS_ADDRESS": address], log: log)
        defer { provider.stop() }
        _ = try await provider.line(startingWith: "secret-service: ready", within: .seconds(30))
        let ours = Provider(secretTool: secretTool, environment: ["DBUS_SESSION_BUS_ADDRESS": address], input: input, log: log)

        let (environment, stopKeyring): ([String: String], @Sendable () -> Void)
        do {
            (environment, stopKeyring) = try await CompetitorFigures.gnomeKeyring(directory, log: log)
        } catch let unavailable as BenchmarkUnavailable {
            throw unavailable
        } catch {
            throw BenchmarkUnavailable("gnome-keyring could not be set up: \(error)")
        }
        defer { stopKeyring() }
        let gnome = Provider(secretTool: secretTool, environment: environment, input: input, log: log)

        let items = scale.items
        try ours.fill(items)
        // gnome-keyring rewrites its keyring file on every store, so filling its login keyring
        // takes time quadratic in the items (15.6 ms a store at 500 items, 80 ms at 2,000: some
        // 35 minutes for 10,000). Its items go to its session collection instead, held in memory
        // like every unlocked item of gnome-keyring and searched by lookups the same way; its
        // measured stores go to its (nearly empty) login keyring, so its store figure is the best
        // it can do (decision 0141).
        try gnome.fill(items, in: "session")
        let operations = max(5, 2 * scale.processRuns)
        var generator = SystemRandomNumberGenerator()
        var rates: (ours: [Double], gnome: [Double], oursStores: [Double], gnomeStores: [Double]) = ([], [], [], [])
        for sample in 0..<min(scale.samples, 5) {
            let wanted = (0..<operations).map { _ in Int.random(in: 0..<items, using: &generator) }
            let fresh = (0..<operations).map { items + sample * operations + $0 }
            rates.gnome.append(try rate(wanted, gnome.lookup))
            rates.ours.append(try rate(wanted, ours.lookup))
            rates.gnomeStores.append(try rate(fresh) { try gnome.store($0) })
            rates.oursStores.append(try rate(fresh) { try ours.store($0) })
        }
        let note = "\(items) items (ours in login, gnome-keyring's in its session collection), \(operations) operations per sample, a secret-tool process each"
        return [
            Figure(name: lookupRow.name, unit: "ops/s", product: Statistics(rates.ours), baselineName: "gnome-keyring",
                   baseline: Statistics(rates.gnome), target: lookupRow.target, note: note),
            Figure(name: storeRow.name, unit: "ops/s", product: Statistics(rates.oursStores), baselineName: "gnome-keyring",
                   baseline: Statistics(rates.gnomeStores), target: storeRow.target, note: note),
        ]
    }

    /// Runs `operation` on each index; operations per second.
    static func rate(_ indices: [Int], _ operation: (Int) throws -> Void) throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        for index in indices { try operation(index) }
        return Double(indices.count) / (clock.now - start).seconds
    }
}

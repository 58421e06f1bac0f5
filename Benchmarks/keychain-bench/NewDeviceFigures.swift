#if SYNCKEYCHAIN_NETWORK
import Foundation
import KeychainCrypto
import KeychainModel
import KeychainStore
import SyncProtocol

/// A new device joining an account of `deviceItems` items: `sync-client enroll` then
/// `sync-client sync` (real processes, TLS with the server's pin, loopback) against a plain HTTP
/// download of the same bytes plus raw SQLite inserts; then the resident memory of a daemon that
/// synced the same account, and of the server.
enum NewDeviceFigures {
    static let benchmark = Benchmark(
        name: "new device",
        rows: [
            .init(name: "new device: enrol + pull", unit: "s", target: .report),
            .init(name: "new device: enrol + pull, less one KDF", unit: "s", target: .timeAtMost(1)),
            .init(name: "new device: enrol + pull, less one KDF, vs the fair pull", unit: "s", target: .timeRatioAtMost(2)),
            .init(name: "quiet sync", unit: "ms", target: .timeAtMost(50)),
            .init(name: "daemon resident memory", unit: "MiB", target: .report),
            .init(name: "server resident memory", unit: "MiB", target: .report),
        ]
    ) { scale, directory in
        let executables = try Executables.located()
        let server = try await BenchServer(executables, directory: directory)
        defer { server.stop() }
        let items = scale.deviceItems
        let account = try await BenchAccount.create(
            on: server, name: "new-device-\(UUID().uuidString.prefix(8))", logN: scale.kdfLogN, directory: directory)
        let client = LoadClient(baseURL: server.url, tls: try await server.tlsConfiguration(), connections: 2)
        progress("uploading \(items) items")
        let feedBytes = try await closing(client) {
            _ = try await client.upload(account.sealedBatches(0..<items, prefix: "n", batchSize: 500), token: account.token, concurrency: 2)
            return try await feedSize(client, token: account.token)
        }
        let blobBytes = feedBytes / items

        let device = DeviceRunner(executables: executables, server: server, account: account.name, directory: directory)
        progress("timing the baseline")
        let baselines = try await PlainDownload.withServer(bytes: feedBytes) { url in
            var times: [Double] = []
            for _ in 0..<scale.deviceSamples {
                let start = ContinuousClock.now
                try await PlainDownload.run(from: url, expectedBytes: feedBytes, rows: items, rowBytes: blobBytes, directory: directory)
                times.append((ContinuousClock.now - start).seconds)
            }
            return times
        }
        progress("timing \(scale.deviceSamples) new devices")
        var totals: [Double] = [], withoutKDF: [Double] = [], kdfs: [Double] = [], peaks: [Double] = []
        for sample in 0..<scale.deviceSamples {
            let keychain = try device.newKeychainPath("new-\(sample)")
            let start = ContinuousClock.now
            try device.enrol(keychain: keychain, name: "bench-new-\(sample)")
            let (output, peak) = try device.syncOnceMeasured(keychain: keychain)
            let total = (ContinuousClock.now - start).seconds
            peaks.append(peak)
            guard output.contains("applied \(items)") else { throw BenchmarkError("sync-client sync: \(output)") }
            let kdf = try Self.oneKDF(logN: scale.kdfLogN)
            totals.append(total)
            kdfs.append(kdf)
            withoutKDF.append(total - kdf)
        }
        progress("timing quiet syncs")
        var quiet: [Double] = []
        let synced = try device.newKeychainPath("new-0")
        for _ in 0..<max(5, scale.deviceSamples * 2) {
            let start = ContinuousClock.now
            let output = try device.syncOnce(keychain: synced)
            quiet.append((ContinuousClock.now - start).seconds * 1000)
            guard output.contains("pushed 0,"), output.contains("applied 0") else { throw BenchmarkError("a quiet sync did something: \(output)") }
        }
        progress("timing the fair pull")
        let fair = try await FairBaseline.measure(items: items, samples: scale.deviceSamples, directory: directory).pull
        progress("a daemon pulls the account")
        let memory = try await DaemonMemory.measure(device: device, server: server, items: items)

        let label = "\(items) items"
        let kdf = "one KDF (scrypt N=2^\(scale.kdfLogN)) \(format(Statistics(kdfs).median)) s"
        return [
            Figure(
                name: "new device: enrol + pull \(label) (TLS, loopback)", unit: "s", product: Statistics(totals),
                baselineName: "HTTP download of the same \(feedBytes / 1024) KiB + raw inserts", baseline: Statistics(baselines),
                target: .report, note: "two processes: sync-client enroll, sync-client sync; a reference: the baseline does no TLS, crypto or durable commit"),
            Figure(
                name: "new device: enrol + pull \(label), less one KDF", unit: "s", product: Statistics(withoutKDF),
                baselineName: nil, baseline: nil, target: .timeAtMost(1),
                note: "\(kdf); the pull's peak memory (sync-client sync, VmHWM, median) \(format(Statistics(peaks).median)) MiB"),
            Figure(
                name: "new device: enrol + pull \(label), less one KDF, vs the fair pull", unit: "s", product: Statistics(withoutKDF),
                baselineName: "fair-sync pull: sign-in, key unwrap, per page open + writer signature + ID check + seal at rest (secret, attributes, key index) + durable commits, statement verify",
                baseline: Statistics(fair), target: .timeRatioAtMost(2), note: "the fair baseline is a process of its own, as sync-client is (issue 35)"),
            Figure(
                name: "quiet sync of a \(label) account", unit: "ms", product: Statistics(quiet), baselineName: nil, baseline: nil,
                target: .timeAtMost(50), note: "one sync-client sync process (TLS, pin check, statements) of a device in step: nothing to push or pull"),
            Figure(
                name: "daemon resident memory, \(label)", unit: "MiB", product: Statistics([memory.daemon.current]),
                baselineName: nil, baseline: nil, target: .report, note: "VmRSS after syncing; peak (VmHWM) \(format(memory.daemon.peak)) MiB"),
            Figure(
                name: "server resident memory, \(label) (SQLite)", unit: "MiB", product: Statistics([memory.server.current]),
                baselineName: nil, baseline: nil, target: .report, note: "VmRSS; peak (VmHWM) \(format(memory.server.peak)) MiB"),
        ]
    }

    /// The bytes of the change feed a new device downloads, page by page as the client asks.
    static func feedSize(_ client: LoadClient, token: String) async throws -> Int {
        var cursor: UInt64 = 0
        var bytes = 0
        while true {
            let body = try await client.send(.GET, "/v1/zones/keychain/changes?after=\(cursor)&limit=500", token: token)
            bytes += body.readableBytes
            let page = try WireCoding.makeDecoder().decode(ChangesResponse.self, from: Data(body.readableBytesView))
            cursor = page.cursor
            if !page.hasMore { return bytes }
        }
    }

    /// The time of one account-key derivation with the account's parameters.
    static func oneKDF(logN: UInt8) throws -> Double {
        let parameters = try KDFParameters(logN: logN, r: 8, p: 1, salt: KDFParameters.generate().salt)
        let start = ContinuousClock.now
        _ = try AccountSecrets.derive(password: BenchAccount.password, parameters: parameters)
        return (ContinuousClock.now - start).seconds
    }
}

/// Resident memory of a `sync-client run` daemon that pulled the whole account, and of the server.
enum DaemonMemory {
    static func measure(
        device: DeviceRunner, server: BenchServer, items: Int
    ) async throws -> (daemon: (current: Double, peak: Double), server: (current: Double, peak: Double)) {
        let keychainPath = try device.newKeychainPath("memory")
        try device.enrol(keychain: keychainPath, name: "bench-memory")
        let daemon = try await device.startDaemon(keychain: keychainPath)
        defer { daemon.stop() }
        let keychain = try Keychain.open(at: keychainPath)
        var attributes = ItemAttributes()
        attributes.service = BenchAccount.service
        let query = Query(itemClass: .genericPassword, attributes: attributes, synchronizable: .yes, limit: .all, returns: .attributes)
        let deadline = ContinuousClock.now + .seconds(600)
        while (try? keychain.find(query).count) ?? 0 < items {
            guard ContinuousClock.now < deadline else { throw BenchmarkError("the daemon did not pull \(items) items in 600 s") }
            try await Task.sleep(for: .milliseconds(50))
        }
        return (try daemon.residentMemory(), try server.process.residentMemory())
    }
}
#endif

#if SYNCKEYCHAIN_NETWORK
import Foundation
import KeychainModel
import KeychainStore
import NIOCore
import SyncClient
import SyncProtocol

/// A device's first push of `deviceItems` items: a device enrolled in a fresh account, the items
/// added to its keychain in one local import (untimed), then the timed `sync-client sync` (a
/// real process, TLS with the server's pin, loopback) that pushes them all; against reading as
/// many rows from SQLite plus a plain HTTP upload of the same bytes in as many requests.
enum FirstPushFigures {
    static let benchmark = Benchmark(
        name: "first push",
        rows: [
            .init(name: "first push", unit: "s", target: .report),
            .init(name: "first push vs the fair push", unit: "s", target: .timeRatioAtMost(2)),
        ]
    ) { scale, directory in
        let executables = try Executables.located()
        let server = try await BenchServer(executables, directory: directory)
        defer { server.stop() }
        let items = scale.deviceItems
        let client = LoadClient(baseURL: server.url, tls: try await server.tlsConfiguration(), connections: 1)
        progress("timing \(scale.deviceSamples) first pushes of \(items) items")
        let (times, usage, upload) = try await closing(client) {
            var times: [Double] = []
            var usage: (clientCPU: [Double], serverCPU: [Double], clientPeakMiB: [Double]) = ([], [], [])
            var upload: [ByteBuffer] = []
            for sample in 0..<scale.deviceSamples {
                let device = DeviceRunner(
                    executables: executables, server: server, account: "first-push-\(sample)-\(UUID().uuidString.prefix(8))",
                    directory: directory)
                let keychain = try device.newKeychainPath("push-\(sample)")
                try device.enrol(keychain: keychain, name: "bench-push-\(sample)", createWithLogN: scale.kdfLogN)
                try addItems(items, to: keychain)
                let requestsBefore = try await uploadRequests(client)
                let (clientBefore, serverBefore) = (ChildProcess.waitedChildrenCPUSeconds(), try server.process.cpuSeconds())
                let start = ContinuousClock.now
                let (output, peak) = try device.syncOnceMeasured(keychain: keychain)
                times.append((ContinuousClock.now - start).seconds)
                usage.clientPeakMiB.append(peak)
                usage.clientCPU.append(ChildProcess.waitedChildrenCPUSeconds() - clientBefore)
                usage.serverCPU.append(try server.process.cpuSeconds() - serverBefore)
                guard output.contains("pushed \(items),") else { throw BenchmarkError("sync-client sync: \(output)") }
                let requests = try await uploadRequests(client) - requestsBefore
                upload = try await uploadBodies(client, token: try token(of: keychain), items: items, requests: requests)
            }
            return (times, usage, upload)
        }
        let bytes = upload.reduce(0) { $0 + $1.readableBytes }
        progress("timing the baseline")
        let database = try PlainUpload.prepareRows(items, rowBytes: bytes / items, directory: directory)
        let baselines = try await PlainUpload.withServer { url in
            var times: [Double] = []
            for _ in 0..<scale.deviceSamples {
                let start = ContinuousClock.now
                try await PlainUpload.run(to: url, bodies: upload, database: database, rows: items)
                times.append((ContinuousClock.now - start).seconds)
            }
            return times
        }
        progress("timing the fair push")
        let fair = try await FairBaseline.measure(items: items, samples: scale.deviceSamples, directory: directory).push
        return [
            Figure(
                name: "first push of \(items) items vs the fair push", unit: "s", product: Statistics(times),
                baselineName: "fair-sync push: read, open at rest (attributes, secret), ID HMAC, sign + seal, a durable state commit per 500-item request, statement",
                baseline: Statistics(fair), target: .timeRatioAtMost(2), note: "the fair baseline is a process of its own, as sync-client is (issue 35)"),
            Figure(
                name: "first push of \(items) items (TLS, loopback)", unit: "s", product: Statistics(times),
                baselineName: "SQLite read of \(items) rows + plain HTTP upload of the same \(bytes / 1024) KiB in \(upload.count) requests",
                baseline: Statistics(baselines), target: .report,
                note: "one sync-client sync of a device enrolled in a fresh account; the server then lists every item; "
                    + "CPU (user + system, median) client \(format(Statistics(usage.clientCPU).median)) s, server \(format(Statistics(usage.serverCPU).median)) s; "
                    + "client peak memory (VmHWM, median) \(format(Statistics(usage.clientPeakMiB).median)) MiB"),
        ]
    }

    /// Adds `count` synchronizable generic passwords to the keychain at `path` in one import.
    static func addItems(_ count: Int, to path: String) throws {
        let items = (0..<count).map { index in
            Item.genericPassword(
                service: BenchAccount.service, account: "p-\(index)", data: Array("secret p \(index) 0123456789".utf8)
            ) { $0.synchronizable = true }
        }
        let counts = try Keychain.open(at: path).importItems(items, keepingDates: false)
        guard counts.imported == count else { throw BenchmarkError("imported \(counts.imported) of \(count) items") }
    }

    /// The device token stored in the keychain at `path`.
    static func token(of path: String) throws -> String {
        try DeviceSecrets(keychain: try Keychain.open(at: path)).token()
    }

    /// How many uploads to a zone the server has answered, from its metrics.
    static func uploadRequests(_ client: LoadClient) async throws -> Int {
        let text = String(buffer: try await client.send(.GET, "/metrics", token: nil))
        return text.split(separator: "\n")
            .filter { $0.hasPrefix("sync_http_requests_total{") && $0.contains("/items\"") && $0.contains("method=\"POST\"") }
            .compactMap { $0.split(separator: " ").last.flatMap { Int(Double($0) ?? -1) } }
            .reduce(0, +)
    }

    /// The upload requests the device sent, rebuilt from the account's change feed (the same
    /// items, vectors and blobs) in `requests` bodies; checks that the feed lists `items` items,
    /// each once.
    static func uploadBodies(_ client: LoadClient, token: String, items: Int, requests: Int) async throws -> [ByteBuffer] {
        var listed: [UploadItem] = []
        var cursor: UInt64 = 0
        while true {
            let body = try await client.send(.GET, "/v1/zones/keychain/changes?after=\(cursor)&limit=500", token: token)
            let page = try WireCoding.makeDecoder().decode(ChangesResponse.self, from: Data(body.readableBytesView))
            for item in page.items {
                guard let version = item.versions.first, item.versions.count == 1 else { throw BenchmarkError("item with siblings in the feed") }
                listed.append(UploadItem(id: item.id, vector: version.vector, deleted: version.deleted, blob: version.blob))
            }
            cursor = page.cursor
            if !page.hasMore { break }
        }
        guard listed.count == items, Set(listed.map(\.id)).count == items else {
            throw BenchmarkError("the server lists \(listed.count) items after the first push of \(items)")
        }
        guard requests > 0 else { throw BenchmarkError("the server counted no upload") }
        let perRequest = (items + requests - 1) / requests
        let encoder = WireCoding.makeEncoder()
        return try stride(from: 0, to: items, by: perRequest).map { start in
            let request = UploadRequest(cursor: 0, items: Array(listed[start..<min(start + perRequest, items)]))
            return ByteBuffer(bytes: try encoder.encode(request))
        }
    }
}
#endif

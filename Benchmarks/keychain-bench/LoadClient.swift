#if SYNCKEYCHAIN_NETWORK
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import SyncProtocol

/// The benchmark's own HTTP client: sends request bodies encoded before the clock starts, so the
/// figures measure the server rather than JSON encoding in the load generator.
final class LoadClient: Sendable {
    private let client: HTTPClient
    let baseURL: String

    init(baseURL: String, tls: TLSConfiguration?, connections: Int = 8) {
        self.baseURL = baseURL
        var configuration = HTTPClient.Configuration()
        configuration.tlsConfiguration = tls
        configuration.httpVersion = .http1Only
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    func shutdown() async { try? await client.shutdown() }

    /// Sends a request and returns the body of a 2xx answer.
    @discardableResult
    func send(_ method: HTTPMethod, _ path: String, token: String?, body: ByteBuffer? = nil) async throws -> ByteBuffer {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(body)
        }
        let response = try await client.execute(request, timeout: .seconds(120))
        let bytes = try await response.body.collect(upTo: 256 << 20)
        guard (200..<300).contains(response.status.code) else {
            throw BenchmarkError("\(method) \(path.prefix(40)) answered \(response.status.code): \(String(buffer: bytes).prefix(200))")
        }
        return bytes
    }

    /// Uploads pre-encoded batches to the keychain zone, `concurrency` at a time; returns the
    /// number of items the server applied and its latest sequence number.
    func upload(_ batches: [EncodedBatch], token: String, concurrency: Int) async throws -> (applied: Int, latest: UInt64) {
        try await withThrowingTaskGroup(of: (Int, UInt64).self) { group in
            var pending = batches.makeIterator()
            for _ in 0..<max(1, concurrency) {
                guard let batch = pending.next() else { break }
                group.addTask { try await self.upload(batch, token: token) }
            }
            var applied = 0
            var latest: UInt64 = 0
            while let (count, sequence) = try await group.next() {
                applied += count
                latest = max(latest, sequence)
                if let batch = pending.next() { group.addTask { try await self.upload(batch, token: token) } }
            }
            return (applied, latest)
        }
    }

    /// Uploads one batch; checks that the server applied every item.
    func upload(_ batch: EncodedBatch, token: String) async throws -> (Int, UInt64) {
        let answer = try await send(.POST, "/v1/zones/keychain/items", token: token, body: batch.body)
        let response = try WireCoding.makeDecoder().decode(UploadResponse.self, from: Data(answer.readableBytesView))
        let applied = response.results.filter { $0.outcome == .applied }.count
        guard applied == batch.count else { throw BenchmarkError("server applied \(applied) of \(batch.count) items") }
        return (applied, response.latestSequence)
    }
}

/// An upload request already encoded as JSON.
struct EncodedBatch: Sendable {
    var body: ByteBuffer
    var count: Int
}
#endif

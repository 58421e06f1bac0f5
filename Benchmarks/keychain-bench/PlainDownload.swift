#if SYNCKEYCHAIN_NETWORK
import Foundation
import GRDB
import Hummingbird
import NIOCore

/// The new-device figure's baseline: a plain HTTP download of the same number of bytes as the
/// device's change feed, from a minimal in-process Hummingbird server on loopback, then raw SQLite
/// inserts of as many rows of blob-sized data in one transaction.
enum PlainDownload {
    /// Runs `body` with the URL of a server that answers `GET /download` with `bytes` bytes.
    static func withServer<T: Sendable>(bytes: Int, _ body: @Sendable (String) async throws -> T) async throws -> T {
        let payload = ByteBuffer(bytes: (0..<bytes).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) })
        let router = Router()
        router.get("/download") { _, _ in Response(status: .ok, body: .init(byteBuffer: payload)) }
        return try await PlainHTTPServer.with(router, body)
    }

    /// Downloads `/download` over a fresh connection and inserts `rows` rows of `rowBytes` bytes
    /// each into a new SQLite database in `directory`, in one transaction.
    static func run(from url: String, expectedBytes: Int, rows: Int, rowBytes: Int, directory: URL) async throws {
        let client = LoadClient(baseURL: url, tls: nil, connections: 1)
        let body: ByteBuffer
        do {
            body = try await client.send(.GET, "/download", token: nil)
            await client.shutdown()
        } catch {
            await client.shutdown()
            throw error
        }
        guard body.readableBytes == expectedBytes else { throw BenchmarkError("downloaded \(body.readableBytes) of \(expectedBytes) bytes") }
        let path = directory.appendingPathComponent("download-\(UUID().uuidString.prefix(8)).sqlite").path
        let queue = try DatabaseQueue(path: path)
        let blob = Data(body.readableBytesView.prefix(rowBytes))
        try insertRows(queue, rows: rows, blob: blob)
        try queue.close()
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Synchronous, so GRDB's blocking `write` is used rather than its async variant.
    private static func insertRows(_ queue: DatabaseQueue, rows: Int, blob: Data) throws {
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE item (id TEXT PRIMARY KEY, blob BLOB NOT NULL)")
            let statement = try db.makeStatement(sql: "INSERT INTO item (id, blob) VALUES (?, ?)")
            for row in 0..<rows {
                try statement.execute(arguments: ["item-\(row)", blob])
            }
        }
    }
}
#endif

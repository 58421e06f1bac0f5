#if SYNCKEYCHAIN_NETWORK
import Foundation
import GRDB
import Hummingbird
import NIOCore

/// The first-push figure's baseline: reading as many rows of blob-sized data from a SQLite
/// database as the device pushes items, then a plain HTTP upload of the same request bodies, one
/// request after another over one fresh connection, to a minimal in-process Hummingbird server on
/// loopback that reads each body whole.
enum PlainUpload {
    /// Runs `body` with the URL of a server that takes `POST /upload` and answers its size.
    static func withServer<T: Sendable>(_ body: @Sendable (String) async throws -> T) async throws -> T {
        let router = Router()
        router.post("/upload") { request, _ -> String in
            String(try await request.body.collect(upTo: 64 << 20).readableBytes)
        }
        return try await PlainHTTPServer.with(router, body)
    }

    /// A new SQLite database in `directory` holding `rows` rows of `rowBytes` bytes each, written
    /// before the clock starts; returns its path.
    static func prepareRows(_ rows: Int, rowBytes: Int, directory: URL) throws -> String {
        let path = directory.appendingPathComponent("upload-\(UUID().uuidString.prefix(8)).sqlite").path
        let queue = try DatabaseQueue(path: path)
        let blob = Data((0..<rowBytes).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) })
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE item (id TEXT PRIMARY KEY, blob BLOB NOT NULL)")
            let statement = try db.makeStatement(sql: "INSERT INTO item (id, blob) VALUES (?, ?)")
            for row in 0..<rows { try statement.execute(arguments: ["item-\(row)", blob]) }
        }
        try queue.close()
        return path
    }

    /// Reads every row of the database at `path` (opened afresh), then uploads `bodies` to
    /// `/upload`, checking the count of rows and the size of every answer.
    static func run(to url: String, bodies: [ByteBuffer], database path: String, rows: Int) async throws {
        let read = try readRows(path)
        guard read == rows else { throw BenchmarkError("read \(read) of \(rows) rows") }
        let client = LoadClient(baseURL: url, tls: nil, connections: 1)
        do {
            for body in bodies {
                let answer = try await client.send(.POST, "/upload", token: nil, body: body)
                guard Int(String(buffer: answer)) == body.readableBytes else { throw BenchmarkError("the upload server read another size") }
            }
            await client.shutdown()
        } catch {
            await client.shutdown()
            throw error
        }
    }

    /// Synchronous, so GRDB's blocking `read` is used rather than its async variant.
    private static func readRows(_ path: String) throws -> Int {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            var count = 0
            var bytes = 0
            let rows = try Row.fetchCursor(db, sql: "SELECT id, blob FROM item")
            while let row = try rows.next() {
                let blob: Data = row[1]
                bytes += blob.count
                count += 1
            }
            return bytes > 0 ? count : 0
        }
    }
}
#endif

import Crypto
import Foundation
import GRDB
import Hummingbird
import HummingbirdTLS
import Logging
import NIOCore
import SyncServer

/// The baseline's server: HTTPS (the self-signed certificate a client pins), keep-alive, one SQLite
/// file. An upload decodes, checks the token, reads the stored vectors of the batch's IDs, upserts
/// the new versions with new sequences and commits once; a feed page is one range scan.
struct FairServer {
    let directory: URL

    static let schema = """
        CREATE TABLE account (id TEXT PRIMARY KEY, auth_hash BLOB, bundle BLOB, latest INTEGER, items INTEGER, bytes INTEGER);
        CREATE TABLE device (token_hash BLOB PRIMARY KEY, account TEXT, device TEXT, acknowledged INTEGER);
        CREATE TABLE item (account TEXT, zone TEXT, id TEXT, sequence INTEGER, tombstone INTEGER, vector BLOB, blob BLOB,
                           PRIMARY KEY (account, zone, id));
        CREATE INDEX item_sequence ON item (account, zone, sequence);
        CREATE TABLE statement (account TEXT, device TEXT, body BLOB, PRIMARY KEY (account, device));
        """

    func run() async throws {
        let file = directory.appendingPathComponent("server.sqlite")
        FairDatabase.remove(file)
        let database = try FairDatabase.open(file, schema: Self.schema)
        let identity = try TLSIdentity.selfSigned(in: directory)
        let router = Router()
        let routes = Routes(database: database)
        router.post("/signin") { request, _ in try await routes.signIn(request) }
        router.post("/v1/zones/keychain/items") { request, _ in try await routes.upload(request) }
        router.get("/v1/zones/keychain/changes") { request, _ in try await routes.changes(request) }
        router.put("/v1/zones/keychain/statement") { request, _ in try await routes.putStatement(request) }
        router.get("/statements") { request, _ in try await routes.statements(request) }
        router.post("/v1/zones/keychain/acknowledge") { request, _ in try await routes.acknowledge(request) }
        let application = Application(
            router: router, server: try .tls(.http1(), tlsConfiguration: identity.serverConfiguration()),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                FileHandle.standardOutput.write(Data("fair-sync: listening on \(channel.localAddress?.port ?? 0)\n".utf8))
            },
            logger: { var logger = Logger(label: "fair-sync"); logger.logLevel = .warning; return logger }())
        try await application.runService()
    }

    struct Routes: Sendable {
        let database: DatabaseQueue
        static let bodyLimit = 64 << 20

        func signIn(_ request: Request) async throws -> Response {
            let body = try await Self.decode(SignIn.self, request)
            let authHash = Data(SHA256.hash(data: body.authKey))
            let token = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }.base64EncodedString()
            let tokenHash = Data(SHA256.hash(data: Data(token.utf8)))
            let bundle: Data? = try await database.write { db in
                var bundle = body.bundle ?? Data()
                if let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT auth_hash, bundle FROM account WHERE id = ?"), arguments: [body.account]) {
                    guard (row[0] as Data) == authHash else { return nil }
                    bundle = row[1]
                } else {
                    try db.cachedStatement(sql: "INSERT INTO account VALUES (?, ?, ?, 0, 0, 0)").execute(arguments: [body.account, authHash, bundle])
                }
                try db.cachedStatement(sql: "INSERT INTO device VALUES (?, ?, ?, 0)").execute(arguments: [tokenHash, body.account, body.device])
                return bundle
            }
            guard let bundle else { return Response(status: .unauthorized) }
            return try Self.json(SignedIn(token: token, bundle: bundle))
        }

        func upload(_ request: Request) async throws -> Response {
            let tokenHash = try Self.tokenHash(request)
            let body = try await Self.decode(Upload.self, request)
            let answer = try await database.write { db -> UploadAnswer? in
                guard let account = try String.fetchOne(db.cachedStatement(sql: "SELECT account FROM device WHERE token_hash = ?"), arguments: [tokenHash]),
                    let counters = try Row.fetchOne(db.cachedStatement(sql: "SELECT latest, items, bytes FROM account WHERE id = ?"), arguments: [account])
                else { return nil }
                var (latest, count, bytes): (Int64, Int64, Int64) = (counters[0], counters[1], counters[2])
                let placeholders = Array(repeating: "?", count: body.items.count).joined(separator: ",")
                var stored: [String: Data] = [:]
                let rows = try Row.fetchCursor(
                    db, sql: "SELECT id, vector FROM item WHERE account = ? AND zone = 'keychain' AND id IN (\(placeholders))",
                    arguments: StatementArguments([account] + body.items.map(\.id)))
                while let row = try rows.next() { stored[row[0]] = row[1] }
                let upsert = try db.cachedStatement(sql: """
                    INSERT INTO item VALUES (?, 'keychain', ?, ?, ?, ?, ?) ON CONFLICT (account, zone, id) DO UPDATE SET
                    sequence = excluded.sequence, tombstone = excluded.tombstone, vector = excluded.vector, blob = excluded.blob
                    """)
                var results: [UploadAnswer.Result] = []
                results.reserveCapacity(body.items.count)
                for item in body.items {
                    let old = stored[item.id]
                    if old == item.vector {
                        results.append(.init(id: item.id, outcome: "stale", sequence: nil))
                        continue
                    }
                    latest += 1
                    if old == nil { count += 1 }
                    bytes += Int64(item.blob.count)
                    try upsert.execute(arguments: [account, item.id, latest, item.deleted, item.vector, item.blob])
                    results.append(.init(id: item.id, outcome: "stored", sequence: latest))
                }
                try db.cachedStatement(sql: "UPDATE account SET latest = ?, items = ?, bytes = ? WHERE id = ?").execute(arguments: [latest, count, bytes, account])
                try db.cachedStatement(sql: "UPDATE device SET acknowledged = ? WHERE token_hash = ?").execute(arguments: [body.cursor, tokenHash])
                return UploadAnswer(results: results, latestSequence: latest)
            }
            guard let answer else { return Response(status: .unauthorized) }
            return try Self.json(answer)
        }

        func changes(_ request: Request) async throws -> Response {
            let tokenHash = try Self.tokenHash(request)
            let after = request.uri.queryParameters.get("after", as: Int64.self) ?? 0
            let limit = request.uri.queryParameters.get("limit", as: Int.self) ?? 500
            let page = try await database.read { db -> Page? in
                guard let account = try String.fetchOne(db.cachedStatement(sql: "SELECT account FROM device WHERE token_hash = ?"), arguments: [tokenHash]) else { return nil }
                var items: [Page.Item] = []
                let rows = try Row.fetchCursor(
                    db.cachedStatement(sql: """
                        SELECT id, sequence, vector, tombstone, blob FROM item WHERE account = ? AND zone = 'keychain' AND sequence > ?
                        ORDER BY sequence LIMIT ?
                        """), arguments: [account, after, limit + 1])
                while let row = try rows.next() {
                    items.append(.init(id: row[0], sequence: row[1], versions: [.init(vector: row[2], deleted: row[3], blob: row[4])]))
                }
                let more = items.count > limit
                if more { items.removeLast() }
                return Page(items: items, cursor: items.last?.sequence ?? after, hasMore: more)
            }
            guard let page else { return Response(status: .unauthorized) }
            return try Self.json(page)
        }

        func putStatement(_ request: Request) async throws -> Response {
            let tokenHash = try Self.tokenHash(request)
            let body = try await Self.decode(StatementBody.self, request)
            try await database.write { db in
                guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT account, device FROM device WHERE token_hash = ?"), arguments: [tokenHash]) else { return }
                try db.cachedStatement(sql: "INSERT OR REPLACE INTO statement VALUES (?, ?, ?)").execute(arguments: [row[0] as String, row[1] as String, body.statement])
            }
            return try Self.json([String: String]())
        }

        func statements(_ request: Request) async throws -> Response {
            let tokenHash = try Self.tokenHash(request)
            let statements = try await database.read { db -> [StoredStatement] in
                guard let account = try String.fetchOne(db.cachedStatement(sql: "SELECT account FROM device WHERE token_hash = ?"), arguments: [tokenHash]) else { return [] }
                return try Row.fetchAll(db.cachedStatement(sql: "SELECT device, body FROM statement WHERE account = ?"), arguments: [account])
                    .map { StoredStatement(device: $0[0], statement: $0[1]) }
            }
            return try Self.json(statements)
        }

        func acknowledge(_ request: Request) async throws -> Response {
            let tokenHash = try Self.tokenHash(request)
            let body = try await Self.decode(Acknowledgement.self, request)
            try await database.write { db in
                try db.cachedStatement(sql: "UPDATE device SET acknowledged = ? WHERE token_hash = ?").execute(arguments: [body.cursor, tokenHash])
            }
            return try Self.json([String: String]())
        }

        private static func tokenHash(_ request: Request) throws -> Data {
            guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else { throw HTTPError(.unauthorized) }
            return Data(SHA256.hash(data: Data(header.dropFirst(7).utf8)))
        }

        private static func decode<T: Decodable>(_ type: T.Type, _ request: Request) async throws -> T {
            let buffer = try await request.body.collect(upTo: bodyLimit)
            return try JSONDecoder().decode(T.self, from: Data(buffer.readableBytesView))
        }

        private static func json(_ value: some Encodable) throws -> Response {
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: try JSONEncoder().encode(value))))
        }
    }
}

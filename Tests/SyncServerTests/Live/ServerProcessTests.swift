import Foundation
import ProcessTesting
import SyncCore
import SyncProtocol
import SyncServer
import Testing

/// The built `sync-server` binary as a real process: TLS with the printed pin, durability across
/// kill -9, graceful SIGTERM, and `Expect: 100-continue` uploads.
@Suite("sync-server process", .serialized)
struct ServerProcessTests {
    static func json(_ value: some Encodable) throws -> [UInt8] { Array(try WireCoding.makeEncoder().encode(value)) }

    /// Creates an account, signs a device in and returns its token.
    static func enroll(_ server: TestServer) async throws -> String {
        let create = try await RawHTTPConnection.request(
            port: server.port, pin: server.pin, method: "POST", path: "/v1/accounts",
            json: json(CreateAccountRequest(account: "alice", authKey: APIClient.authKey(1), keys: APIClient.keys)))
        try #require(create.status == 201, "\(create.body)")
        let signIn = try await RawHTTPConnection.request(
            port: server.port, pin: server.pin, method: "POST", path: "/v1/sign-in",
            json: json(SignInRequest(account: "alice", authKey: APIClient.authKey(1), device: DeviceID("laptop")!, deviceName: "laptop")))
        try #require(signIn.status == 200, "\(signIn.body)")
        return try WireCoding.makeDecoder().decode(SignInResponse.self, from: Data(signIn.body.utf8)).token
    }

    @Test func servesTLSWithThePrintedPinAndKeepsItsCertificate() async throws {
        try await withTemporaryDirectory { parent in
            let directory = parent.appendingPathComponent("data")
            let server = try await TestServer(dataDirectory: directory, relaxedRateLimits: false)
            let pin = try #require(server.pin)
            #expect(pin.hasPrefix("sha256/") && pin.count == 7 + 44)
            let health = try await RawHTTPConnection.request(port: server.port, pin: pin, method: "GET", path: "/health")
            #expect(health.status == 200)
            await #expect(throws: (any Error).self) {
                _ = try await RawHTTPConnection.request(port: server.port, pin: "sha256/" + String(repeating: "A", count: 43) + "=", method: "GET", path: "/health")
            }
            for name in [TLSIdentity.certificateFileName, TLSIdentity.keyFileName, SQLiteStorage.fileName] {
                #expect(try permissions(of: directory.appendingPathComponent(name)) == 0o600, "\(name)")
            }
            #expect(try permissions(of: directory) == 0o700)
            server.signal(SIGTERM)
            _ = await server.waitForExit()
            let restarted = try await TestServer(dataDirectory: directory, relaxedRateLimits: false)
            #expect(restarted.pin == pin)
        }
    }

    @Test func acknowledgedUploadSurvivesKill9() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory, relaxedRateLimits: false)
            let token = try await Self.enroll(server)
            let upload = try await RawHTTPConnection.request(
                port: server.port, pin: server.pin, method: "POST", path: "/v1/zones/keychain/items", token: token,
                json: Self.json(UploadRequest(cursor: 0, items: [APIClient.item("durable", ["laptop": 1])])))
            #expect(upload.status == 200)
            server.signal(SIGKILL)
            #expect(await server.waitForExit() != nil)
            let restarted = try await TestServer(dataDirectory: directory, relaxedRateLimits: false)
            let feed = try await RawHTTPConnection.request(
                port: restarted.port, pin: restarted.pin, method: "GET", path: "/v1/zones/keychain/changes", token: token)
            #expect(feed.status == 200)
            let changes = try WireCoding.makeDecoder().decode(ChangesResponse.self, from: Data(feed.body.utf8))
            #expect(changes.items.map(\.id) == ["durable"])
        }
    }

    @Test func sigtermShutsDownGracefully() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory, relaxedRateLimits: false)
            server.signal(SIGTERM)
            #expect(await server.waitForExit() == 0)
        }
    }

    @Test func largeUploadWithExpectContinueGetsContinueAtOnce() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory, relaxedRateLimits: false)
            let token = try await Self.enroll(server)
            let body = try Self.json(UploadRequest(cursor: 0, items: (0..<100).map { APIClient.item("big\($0)", ["laptop": 1], blobSize: 40_000) }))
            #expect(body.count > 4 << 20)
            let connection = try await RawHTTPConnection.connect(port: server.port, pin: server.pin)
            try await connection.send("""
                POST /v1/zones/keychain/items HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(token)\r\n\
                Content-Type: application/json\r\nContent-Length: \(body.count)\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n
                """)
            // The body is held back until the interim answer comes: a server that waits for the body
            // first (as Hummingbird alone does) fails here, where curl would stall a second.
            let interim = try await connection.read(until: "\r\n\r\n")
            #expect(interim.hasPrefix("HTTP/1.1 100 Continue"))
            try await connection.send(body)
            let response = try RawHTTPConnection.parse(try await connection.readResponse())
            await connection.close()
            #expect(response.status == 200)
            #expect(try WireCoding.makeDecoder().decode(UploadResponse.self, from: Data(response.body.utf8)).results.count == 100)
        }
    }

    @Test func insecureHTTPServesPlainHTTPOnlyWhenAsked() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory, relaxedRateLimits: false, options: ["--insecure-http"])
            #expect(server.pin == nil)
            let health = try await RawHTTPConnection.request(port: server.port, pin: nil, method: "GET", path: "/health")
            #expect(health.status == 200)
        }
    }
}

import Foundation
import ProcessTesting
import SyncCore
import SyncProtocol
import SyncServer
import Synchronization
import Testing

/// Two real `sync-server` processes on one PostgreSQL database: they serve the same accounts, and a
/// change accepted by one is pushed to a device subscribed on the other (LISTEN/NOTIFY).
@Suite("sync-server processes on PostgreSQL", .postgresCluster, .serialized)
struct PostgresServerProcessTests {
    @Test func pushCrossesFromOneServerProcessToAnother() async throws {
        try await PostgresTestCluster.withFreshDatabase { location in
            try await withTemporaryDirectory { directory in
                let first = try await TestServer(dataDirectory: directory.appendingPathComponent("one"), database: "\(location)", insecure: true, relaxedRateLimits: false)
                defer { first.stop() }
                let second = try await TestServer(dataDirectory: directory.appendingPathComponent("two"), database: "\(location)", insecure: true, relaxedRateLimits: false)
                defer { second.stop() }

                // The account is created and the device signed in through process 2 only.
                let token = try await Self.enroll(port: second.port)
                let uploads = UploadCounter()
                let message = try await PushTests.firstMessage(port: first.port, token: token) {
                    // Subscribed on process 1; every change goes through process 2, until one is heard.
                    while !Task.isCancelled {
                        let reply = try await RawHTTPConnection.request(
                            port: second.port, pin: nil, method: "POST", path: "/v1/zones/keychain/items", token: token,
                            json: Self.json(UploadRequest(cursor: 0, items: [APIClient.item("crossing", ["laptop": uploads.next()])])))
                        #expect(reply.status == 200, "\(reply.body)")
                        try await Task.sleep(for: .milliseconds(100))
                    }
                }
                #expect(message?.type == "changed")
                #expect(message?.zone == "keychain")

                // Process 1 serves what process 2 stored.
                let feed = try await RawHTTPConnection.request(
                    port: first.port, pin: nil, method: "GET", path: "/v1/zones/keychain/changes", token: token)
                #expect(feed.status == 200, "\(feed.body)")
                let changes = try WireCoding.makeDecoder().decode(ChangesResponse.self, from: Data(feed.body.utf8))
                #expect(changes.items.map(\.id) == ["crossing"])
                #expect(uploads.count >= 1)

                // Both processes answer an unknown name alike: the fake salt's secret is shared.
                let fakes = try await [first.port, second.port].asyncMap { port in
                    let reply = try await RawHTTPConnection.request(
                        port: port, pin: nil, method: "POST", path: "/v1/sign-in/parameters",
                        json: Self.json(PreSignInRequest(account: "nobody")))
                    #expect(reply.status == 200, "\(reply.body)")
                    return reply.body
                }
                #expect(fakes[0] == fakes[1])

                // SIGTERM: each shuts down gracefully, its connection pool last (decision 0066).
                for server in [first, second] {
                    server.signal(SIGTERM)
                    #expect(await server.waitForExit(timeout: .seconds(10)) == 0)
                }
            }
        }
    }

    @Test func acknowledgedUploadSurvivesKill9() async throws {
        try await PostgresTestCluster.withFreshDatabase { location in
            try await withTemporaryDirectory { directory in
                let server = try await TestServer(dataDirectory: directory.appendingPathComponent("one"), database: "\(location)", insecure: true, relaxedRateLimits: false)
                defer { server.stop() }
                let token = try await Self.enroll(port: server.port)
                let upload = try await RawHTTPConnection.request(
                    port: server.port, pin: nil, method: "POST", path: "/v1/zones/keychain/items", token: token,
                    json: Self.json(UploadRequest(cursor: 0, items: [APIClient.item("durable", ["laptop": 1])])))
                #expect(upload.status == 200, "\(upload.body)")
                try await server.kill9()
                let restarted = try await TestServer(dataDirectory: directory.appendingPathComponent("two"), database: "\(location)", insecure: true, relaxedRateLimits: false)
                defer { restarted.stop() }
                let feed = try await RawHTTPConnection.request(
                    port: restarted.port, pin: nil, method: "GET", path: "/v1/zones/keychain/changes", token: token)
                #expect(feed.status == 200, "\(feed.body)")
                let changes = try WireCoding.makeDecoder().decode(ChangesResponse.self, from: Data(feed.body.utf8))
                #expect(changes.items.map(\.id) == ["durable"])
            }
        }
    }

    static func json(_ value: some Encodable) throws -> [UInt8] { Array(try WireCoding.makeEncoder().encode(value)) }

    static func enroll(port: Int) async throws -> String {
        let create = try await RawHTTPConnection.request(
            port: port, pin: nil, method: "POST", path: "/v1/accounts",
            json: json(CreateAccountRequest(account: "alice", authKey: APIClient.authKey(1), keys: APIClient.keys)))
        try #require(create.status == 201, "\(create.body)")
        let signIn = try await RawHTTPConnection.request(
            port: port, pin: nil, method: "POST", path: "/v1/sign-in",
            json: json(SignInRequest(account: "alice", authKey: APIClient.authKey(1), device: DeviceID("laptop")!, deviceName: "laptop")))
        try #require(signIn.status == 200, "\(signIn.body)")
        return try WireCoding.makeDecoder().decode(SignInResponse.self, from: Data(signIn.body.utf8)).token
    }
}

/// Counts uploads from a concurrently running closure.
final class UploadCounter: Sendable {
    private let value = Mutex<UInt64>(0)

    func next() -> UInt64 { value.withLock { $0 += 1; return $0 } }
    var count: UInt64 { value.withLock { $0 } }
}

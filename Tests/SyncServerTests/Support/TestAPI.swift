import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import InMemoryLogging
import Logging
import NIOCore
import SyncCore
import SyncProtocol
import SyncServer
import Testing

/// An in-process server over a fresh storage of one backend, a manual clock and a capturing logger.
struct TestAPI: Sendable {
    let storage: any ServerStorage
    let clock: ManualClock
    let logs: InMemoryLogHandler
    let application: SyncApplication

    /// Runs `body` against the router of a fresh server on `backend`.
    static func with(
        _ backend: Backend,
        _ adjust: (inout ServerConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (TestAPI, APIClient) async throws -> Void
    ) async throws {
        let configuration = Self.configuration(adjust)
        // Bounded: a run once stalled in one of these for good, every thread idle, cause unknown;
        // a failed test names where, where a stalled run names nothing.
        try await withTimeLimit(.seconds(600)) {
            try await backend.withStorage { storage in
                let api = TestAPI(storage: storage, configuration: configuration)
                let app = Application(router: api.application.makeRouter(), logger: api.application.logger)
                try await app.test(.router) { client in try await body(api, APIClient(client: client)) }
            }
        }
    }

    /// The tests' server configuration, changed by `adjust`.
    static func configuration(_ adjust: (inout ServerConfiguration) -> Void) -> ServerConfiguration {
        var configuration = ServerConfiguration()
        // Router tests make many accounts from one (unknown) address; the creation budget has its own test.
        configuration.signInRateLimit.accountCreationsPerAddress = 10_000
        adjust(&configuration)
        return configuration
    }

    init(storage: any ServerStorage, adjust: (inout ServerConfiguration) -> Void = { _ in }) {
        self.init(storage: storage, configuration: Self.configuration(adjust))
    }

    init(storage: any ServerStorage, configuration: ServerConfiguration) {
        self.storage = storage
        clock = ManualClock()
        logs = InMemoryLogHandler()
        var logger = Logger(label: "test", factory: { [logs] _ in logs })
        logger.logLevel = .trace
        application = SyncApplication(storage: storage, configuration: configuration, clock: clock.clock, logger: logger)
    }
}

/// JSON requests against a test client.
struct APIClient: Sendable {
    private let execute: @Sendable (String, HTTPRequest.Method, HTTPFields, ByteBuffer?) async throws -> (HTTPResponse, ByteBuffer)

    init(client: any TestClientProtocol) {
        execute = { uri, method, headers, body in
            let response = try await client.execute(uri: uri, method: method, headers: headers, body: body)
            return (response.head, response.body)
        }
    }

    /// Requests over `connection`, a keep-alive connection to a live server.
    ///
    /// Each bounded here: the client's own read timeout does not end a request whose connection
    /// stays open and silent (it waits for the answer's future, which cancellation does not end).
    init(connection: TestClient) {
        execute = { uri, method, headers, body in
            var headers = headers
            headers[.connection] = "keep-alive"
            let request = TestClient.Request(uri, method: method, authority: "localhost", headers: headers, body: body)
            let response = try await withTimeLimit(.seconds(150), stage: { "\(method) \(uri) unanswered" }) {
                try await connection.execute(request)
            }
            return (response.head, response.body ?? ByteBuffer())
        }
    }

    struct Reply: Sendable {
        let status: HTTPResponse.Status
        let body: [UInt8]
        let headers: HTTPFields

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try WireCoding.makeDecoder().decode(T.self, from: Data(body))
        }

        /// The error code of an error body, or nil.
        var errorCode: String? { try? decode(ErrorResponse.self).error.code }
    }

    func send(
        _ method: HTTPRequest.Method, _ path: String, token: String? = nil, json: (any Encodable)? = nil,
        raw: [UInt8]? = nil, headers extra: HTTPFields = [:]
    ) async throws -> Reply {
        var headers = extra
        if let token { headers[.authorization] = "Bearer \(token)" }
        var body: ByteBuffer?
        if let json {
            body = ByteBuffer(bytes: try WireCoding.makeEncoder().encode(json))
            if headers[.contentType] == nil { headers[.contentType] = "application/json" }
        } else if let raw {
            body = ByteBuffer(bytes: raw)
        }
        let (head, responseBody) = try await execute(path, method, headers, body)
        return Reply(status: head.status, body: Array(responseBody.readableBytesView), headers: head.headerFields)
    }

    static func authKey(_ seed: UInt8) -> Base64Bytes { Base64Bytes(Array(repeating: seed, count: 32)) }

    static let keys = AccountKeyBundle(
        kdf: .standard, salt: Base64Bytes(Array(repeating: 5, count: 16)), wrappedAccountKey: Base64Bytes(Array(repeating: 6, count: 72)))

    @discardableResult
    func createAccount(_ name: String, key: UInt8 = 1) async throws -> Reply {
        let reply = try await send(.post, "/v1/accounts", json: CreateAccountRequest(account: name, authKey: Self.authKey(key), keys: Self.keys))
        return reply
    }

    func signIn(_ name: String, key: UInt8 = 1, device: String = "laptop") async throws -> Reply {
        try await send(.post, "/v1/sign-in", json: SignInRequest(
            account: name, authKey: Self.authKey(key), device: DeviceID(device)!, deviceName: "\(device) of \(name)"))
    }

    /// Creates the account and signs a device in; returns its token.
    func enroll(_ name: String, device: String = "laptop", key: UInt8 = 1) async throws -> String {
        _ = try await createAccount(name, key: key)
        let reply = try await signIn(name, key: key, device: device)
        try #require(reply.status == .ok)
        return try reply.decode(SignInResponse.self).token
    }

    static func item(_ id: String, _ counters: [String: UInt64], deleted: Bool = false, blobSize: Int = 48) -> UploadItem {
        UploadItem(
            id: ItemID(id), vector: VersionVector(Dictionary(uniqueKeysWithValues: counters.map { (DeviceID($0.key)!, $0.value) })),
            deleted: deleted, blob: Base64Bytes((0..<blobSize).map { UInt8(truncatingIfNeeded: $0 &+ id.utf8.count) }))
    }

    func upload(_ items: [UploadItem], zone: String = "keychain", group: String? = nil, cursor: UInt64 = 0, token: String) async throws -> Reply {
        try await send(.post, "\(Self.zonePath(zone, group))/items", token: token, json: UploadRequest(cursor: cursor, items: items))
    }

    func changes(zone: String = "keychain", group: String? = nil, after: UInt64 = 0, extra: String = "", token: String) async throws -> Reply {
        try await send(.get, "\(Self.zonePath(zone, group))/changes?after=\(after)\(extra)", token: token)
    }

    /// A zone of the caller's account, or of a shared group's.
    static func zonePath(_ zone: String, _ group: String?) -> String {
        (group.map { "/v1/groups/\($0)" } ?? "/v1") + "/zones/\(zone)"
    }
}

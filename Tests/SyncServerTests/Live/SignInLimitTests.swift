import Foundation
import ProcessTesting
import SyncCore
import SyncProtocol
import SyncServer
import Testing

/// Sign-in and account-creation limits over real HTTP from several loopback addresses, each
/// standing for another client (decision 0151): a stranger's guesses lock out only the stranger,
/// refusals say when to retry, and the server stays up.
@Suite("Sign-in and account-creation limits, live", .serialized)
struct SignInLimitTests {
    struct Answer {
        let status: Int
        let retryAfter: Int?
        let body: String
    }

    static func post(_ server: TestServer, _ path: String, from source: String, _ value: some Encodable) async throws -> Answer {
        let json = Array(try WireCoding.makeEncoder().encode(value))
        let connection = try await RawHTTPConnection.connect(port: server.port, pin: server.pin, source: source)
        let head = "POST \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(json.count)\r\n\r\n"
        try await connection.send(Array(head.utf8) + json)
        let response = try await connection.readResponse(timeout: .seconds(60))
        await connection.close()
        let (status, body) = try RawHTTPConnection.parse(response)
        let retryAfter = response.components(separatedBy: "\r\n")
            .first { $0.lowercased().hasPrefix("retry-after:") }
            .flatMap { Int($0.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") }
        return Answer(status: status, retryAfter: retryAfter, body: body)
    }

    static func signIn(_ server: TestServer, from source: String, key: UInt8, device: String = "laptop") async throws -> Answer {
        try await post(server, "/v1/sign-in", from: source, SignInRequest(
            account: "alice", authKey: APIClient.authKey(key), device: DeviceID(device)!, deviceName: device))
    }

    static func expectRateLimited(_ answer: Answer, within seconds: ClosedRange<Int>) {
        #expect(answer.status == 429, "\(answer.body)")
        #expect(answer.body.contains(ErrorCode.rateLimited))
        #expect(answer.retryAfter.map(seconds.contains) == true, "Retry-After \(String(describing: answer.retryAfter))")
    }

    @Test func aStrangerLocksOutOnlyThemselvesAndTheOwnerNeverWaitsMoreThanAWindow() async throws {
        try await withTemporaryDirectory { directory in
            // An hour's window: the test's requests fall in one window however slowly the machine
            // answers them (each sign-in derives a key).
            let server = try await TestServer(dataDirectory: directory, relaxedRateLimits: false, options: [
                "--sign-in-attempts-per-account", "3", "--sign-in-failures-per-account", "6", "--sign-in-window", "1h",
            ])
            let owner = "127.0.0.1"
            let create = try await Self.post(server, "/v1/accounts", from: owner, CreateAccountRequest(
                account: "alice", authKey: APIClient.authKey(1), keys: APIClient.keys))
            try #require(create.status == 201, "\(create.body)")
            #expect(try await Self.signIn(server, from: owner, key: 1).status == 200)

            // One stranger: three wrong guesses, then refused with a Retry-After within the window.
            for _ in 0..<3 { #expect(try await Self.signIn(server, from: "127.0.0.2", key: 9).status == 401) }
            Self.expectRateLimited(try await Self.signIn(server, from: "127.0.0.2", key: 1), within: 1...3600)
            // The owner is not affected, from the address it used or from a new one.
            #expect(try await Self.signIn(server, from: owner, key: 1, device: "phone").status == 200)
            #expect(try await Self.signIn(server, from: "127.0.0.5", key: 1, device: "tablet").status == 200)

            // A stranger spread over addresses spends the account-wide budget: a new address waits at
            // most one window, the owner's known addresses do not wait at all.
            for source in ["127.0.0.3"] {
                for _ in 0..<3 { #expect(try await Self.signIn(server, from: source, key: 9).status == 401) }
            }
            Self.expectRateLimited(try await Self.signIn(server, from: "127.0.0.6", key: 1, device: "new"), within: 1...3600)
            #expect(try await Self.signIn(server, from: owner, key: 1, device: "desktop").status == 200)
            #expect(try await Self.signIn(server, from: "127.0.0.5", key: 1, device: "tablet").status == 200)
            let health = try await RawHTTPConnection.request(port: server.port, pin: server.pin, method: "GET", path: "/health")
            #expect(health.status == 200)
        }
    }

    @Test func accountCreationIsLimitedPerAddressPerHour() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory, relaxedRateLimits: false, options: ["--account-creations-per-address", "2"])
            for name in ["one", "two"] {
                let created = try await Self.post(server, "/v1/accounts", from: "127.0.0.7", CreateAccountRequest(
                    account: name, authKey: APIClient.authKey(1), keys: APIClient.keys))
                #expect(created.status == 201, "\(created.body)")
            }
            let refused = try await Self.post(server, "/v1/accounts", from: "127.0.0.7", CreateAccountRequest(
                account: "three", authKey: APIClient.authKey(1), keys: APIClient.keys))
            Self.expectRateLimited(refused, within: 61...3600)
            let elsewhere = try await Self.post(server, "/v1/accounts", from: "127.0.0.8", CreateAccountRequest(
                account: "three", authKey: APIClient.authKey(1), keys: APIClient.keys))
            #expect(elsewhere.status == 201, "\(elsewhere.body)")
        }
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import Logging
import SyncCore
import SyncProtocol
import SyncServer
import Synchronization
import Testing

/// The WebSocket push channel on a live in-process server.
@Suite("Push channel")
struct PushTests {
    /// A live server on `backend`; the application runs the storage's services, as `sync-server` does.
    static func withLiveServer(
        _ backend: Backend, maximumConnections: Int = 20, tokenFailures: Int = 100, _ body: @escaping @Sendable (APIClient, Int) async throws -> Void
    ) async throws {
        try await backend.withStorage(runningServices: false) { storage in
            let api = TestAPI(storage: storage) {
                $0.limits.maximumPushConnectionsPerAccount = maximumConnections
                $0.tokenFailureRateLimit.failuresPerAddress = tokenFailures
            }
            try await api.live(body)
        }
    }

    /// Connects to the push channel and returns the first message, running `trigger` once connected.
    /// `trigger` runs until the message arrives (it is cancelled then), so it may repeat its writes.
    static func firstMessage(port: Int, token: String, trigger: @escaping @Sendable () async throws -> Void) async throws -> PushMessage? {
        let connected = Atomic<Bool>(false)
        let stage: @Sendable () -> String = {
            connected.load(ordering: .relaxed) ? "connected, no message yet" : "the push channel's handshake not finished"
        }
        return try await withTimeLimit(stage: stage) {
            let received = Mutex<PushMessage?>(nil)
            try await WebSocketClient.connect(
                url: "ws://127.0.0.1:\(port)/v1/push",
                configuration: .init(additionalHeaders: [.authorization: "Bearer \(token)"]),
                logger: Logger(label: "push-test")
            ) { inbound, _, _ in
                connected.store(true, ordering: .relaxed)
                // The server registers the connection right after the upgrade; writes until one is heard.
                let uploader = Task { try await trigger() }
                defer { uploader.cancel() }
                for try await message in inbound.messages(maxSize: 1 << 16) {
                    if case .text(let text) = message,
                        let push = try? WireCoding.makeDecoder().decode(PushMessage.self, from: Data(text.utf8))
                    {
                        received.withLock { $0 = push }
                        return
                    }
                }
            }
            return received.withLock { $0 }
        }
    }

    /// Expects the push channel to refuse a subscription with `token` (or without one).
    static func expectSubscriptionRefused(port: Int, token: String?, sourceLocation: SourceLocation = #_sourceLocation) async {
        let headers: HTTPFields = token.map { [.authorization: "Bearer \($0)"] } ?? [:]
        // Bounded: a handshake the server never answers fails the test instead of stalling the run
        // (it did once, in a fresh-clone run of 2026-11-27).
        do {
            _ = try await withTimeLimit {
                try await WebSocketClient.connect(
                    url: "ws://127.0.0.1:\(port)/v1/push", configuration: .init(additionalHeaders: headers), logger: Logger(label: "push-test")
                ) { _, _, _ in }
            }
            Issue.record("the subscription was accepted", sourceLocation: sourceLocation)
        } catch is TimeLimitExceeded {
            Issue.record("the server neither refused nor accepted the subscription", sourceLocation: sourceLocation)
        } catch {}
    }

    /// Uploads a new version of one item every 50 ms until cancelled.
    static func uploadRepeatedly(_ client: APIClient, token: String, zone: String) async throws {
        var counter: UInt64 = 1
        while !Task.isCancelled {
            _ = try? await client.upload([APIClient.item("i", ["laptop": counter])], zone: zone, token: token)
            counter += 1
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// An upload to a shared group's zone is told to the member accounts' connections, naming the
    /// group (decision 0290).
    @Test(arguments: Backend.all)
    func aGroupZonesChangeIsToldToItsMembers(_ backend: Backend) async throws {
        try await Self.withLiveServer(backend) { client, port in
            let (alice, bob) = try await GroupZoneRouteTests.aliceAndBobInAGroup(client)
            let group = GroupZoneRouteTests.group
            let message = try await Self.firstMessage(port: port, token: bob) {
                var counter: UInt64 = 1
                while !Task.isCancelled {
                    _ = try? await client.upload([APIClient.item("i", ["laptop": counter])], zone: "shared", group: group, token: alice)
                    counter += 1
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            #expect(message?.type == "groupChanged" && message?.group == group && message?.zone == ZoneID("shared"))
        }
    }

    @Test(arguments: Backend.all)
    func connectionsPerAccountAreCapped(_ backend: Backend) async throws {
        try await Self.withLiveServer(backend, maximumConnections: 1) { client, port in
            let token = try await client.enroll("alice")
            let configuration = WebSocketClientConfiguration(additionalHeaders: [.authorization: "Bearer \(token)"])
            _ = try await withTimeLimit {
                try await WebSocketClient.connect(
                    url: "ws://127.0.0.1:\(port)/v1/push", configuration: configuration, logger: Logger(label: "push-test")
                ) { inbound, _, _ in
                    // Once this connection hears a change it is registered: the account is at its cap.
                    let uploader = Task { try await Self.uploadRepeatedly(client, token: token, zone: "keychain") }
                    defer { uploader.cancel() }
                    for try await message in inbound.messages(maxSize: 1 << 16) {
                        if case .text = message { break }
                    }
                    await Self.expectSubscriptionRefused(port: port, token: token)
                    let refused = try await client.send(.get, "/v1/push", token: token)
                    #expect(refused.status == .conflict)
                    #expect(refused.errorCode == ErrorCode.quotaExceeded)
                }
            }
        }
    }

    @Test(arguments: Backend.all)
    func unauthenticatedSubscriptionIsRefused(_ backend: Backend) async throws {
        try await Self.withLiveServer(backend) { _, port in
            await Self.expectSubscriptionRefused(port: port, token: nil)
        }
    }

    @Test(arguments: Backend.all)
    func addressOverItsTokenFailureBudgetCannotSubscribeEvenWithAValidToken(_ backend: Backend) async throws {
        try await Self.withLiveServer(backend, tokenFailures: 1) { client, port in
            let token = try await client.enroll("alice")
            await Self.expectSubscriptionRefused(port: port, token: "guess")
            await Self.expectSubscriptionRefused(port: port, token: token)
            let refused = try await client.send(.get, "/v1/push", token: token)
            #expect(refused.status == .tooManyRequests)
            #expect(refused.errorCode == ErrorCode.rateLimited)
        }
    }

    /// A revoked device's open push connection is closed by the server at once, with the reason,
    /// so it hears of no later change.
    @Test(arguments: Backend.all)
    func aRevokedDevicesOpenConnectionIsClosed(_ backend: Backend) async throws {
        try await Self.withLiveServer(backend) { client, port in
            let laptop = try await client.enroll("alice", device: "alice-laptop", key: 1)
            let phone = try await client.signIn("alice", key: 1, device: "alice-phone").decode(SignInResponse.self).token
            let closed = try await withTimeLimit {
                try await WebSocketClient.connect(
                    url: "ws://127.0.0.1:\(port)/v1/push",
                    configuration: .init(additionalHeaders: [.authorization: "Bearer \(phone)"]),
                    logger: Logger(label: "push-test")
                ) { inbound, _, _ in
                    // Registered once it hears a change; then the laptop revokes it.
                    let uploader = Task { try await Self.uploadRepeatedly(client, token: laptop, zone: "keychain") }
                    defer { uploader.cancel() }
                    var revoked = false
                    for try await message in inbound.messages(maxSize: 1 << 16) where !revoked {
                        guard case .text = message else { continue }
                        uploader.cancel()
                        revoked = true
                        #expect(try await client.send(.delete, "/v1/devices/alice-phone", token: laptop).status == .noContent)
                    }
                }
            }
            #expect(closed?.closeCode == .policyViolation)
            #expect(closed?.reason == "device revoked")
        }
    }

    @Test(arguments: Backend.all)
    func changesArePushedOnlyToTheAccountsOwnConnections(_ backend: Backend) async throws {
        try await Self.withLiveServer(backend) { client, port in
            let alice = try await client.enroll("alice", device: "alice-laptop", key: 1)
            let bob = try await client.enroll("bob", device: "bob-laptop", key: 2)
            // Each round, Alice's change comes first: a leak would reach Bob before his own.
            let message = try await Self.firstMessage(port: port, token: bob) {
                var counter: UInt64 = 1
                while !Task.isCancelled {
                    // An upload lost to a loaded machine is tried again next round, not the end of the trigger.
                    _ = try? await client.upload([APIClient.item("i", ["alice-laptop": counter])], zone: "alices", token: alice)
                    _ = try? await client.upload([APIClient.item("i", ["bob-laptop": counter])], zone: "bobs", token: bob)
                    counter += 1
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            #expect(message?.zone == "bobs")
        }
    }
}

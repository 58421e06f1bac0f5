import Foundation
import SyncCore
import SyncProtocol
import SyncServer
import Testing

/// Bob's token against every endpoint never reads or changes Alice's data.
@Suite("Cross-account isolation")
struct CrossAccountTests {
    struct World: Sendable {
        let api: TestAPI
        let client: APIClient
        let alice: String
        let bob: String
    }

    /// Alice (key 1) with item "shared" and a tombstone "gone"; Bob (key 2) with nothing.
    static func withWorld(_ backend: Backend, _ body: @escaping @Sendable (World) async throws -> Void) async throws {
        try await TestAPI.with(backend) { api, client in
            let alice = try await client.enroll("alice", device: "alice-laptop", key: 1)
            let bob = try await client.enroll("bob", device: "bob-laptop", key: 2)
            _ = try await client.upload([APIClient.item("shared", ["alice-laptop": 1]), APIClient.item("gone", ["alice-laptop": 1])], token: alice)
            _ = try await client.upload([APIClient.item("gone", ["alice-laptop": 2], deleted: true)], token: alice)
            try await body(World(api: api, client: client, alice: alice, bob: bob))
            // Alice's data is exactly what she wrote, and her token still works.
            let feed = try await client.changes(token: alice).decode(ChangesResponse.self)
            #expect(feed.items.map(\.id) == ["shared", "gone"])
            #expect(feed.items.first?.versions.map(\.vector) == [APIClient.item("shared", ["alice-laptop": 1]).vector])
            #expect(feed.cursor == 3)
        }
    }

    @Test(arguments: Backend.all)
    func deviceListShowsOnlyTheCallersAccount(_ backend: Backend) async throws {
        try await Self.withWorld(backend) { world in
            let list = try await world.client.send(.get, "/v1/devices", token: world.bob).decode(DeviceListResponse.self)
            #expect(list.devices.map(\.id.rawValue) == ["bob-laptop"])
        }
    }

    @Test(arguments: Backend.all)
    func anotherAccountsDeviceCannotBeRevoked(_ backend: Backend) async throws {
        try await Self.withWorld(backend) { world in
            let reply = try await world.client.send(.delete, "/v1/devices/alice-laptop", token: world.bob)
            #expect(reply.status == .notFound)
            #expect(try await world.client.send(.get, "/v1/devices", token: world.alice).status == .ok)
        }
    }

    @Test(arguments: Backend.all)
    func feedShowsOnlyTheCallersItems(_ backend: Backend) async throws {
        try await Self.withWorld(backend) { world in
            for extra in ["", "&resync=true"] {
                let feed = try await world.client.changes(extra: extra, token: world.bob).decode(ChangesResponse.self)
                #expect(feed.items.isEmpty && feed.cursor == 0)
            }
        }
    }

    @Test(arguments: Backend.all)
    func uploadWithTheSameItemIDLandsInTheCallersAccount(_ backend: Backend) async throws {
        try await Self.withWorld(backend) { world in
            let reply = try await world.client.upload([APIClient.item("shared", ["bob-laptop": 5])], token: world.bob)
            #expect(try reply.decode(UploadResponse.self).results.map(\.sequence) == [1])
            let bobs = try await world.client.changes(token: world.bob).decode(ChangesResponse.self)
            #expect(bobs.items.map(\.id) == ["shared"])
        }
    }

    @Test(arguments: Backend.all)
    func acknowledgementDoesNotReleaseAnotherAccountsTombstones(_ backend: Backend) async throws {
        try await Self.withWorld(backend) { world in
            let reply = try await world.client.send(.post, "/v1/zones/keychain/acknowledge", token: world.bob, json: AcknowledgeRequest(cursor: 99))
            #expect(reply.status == .noContent)
            #expect(try await world.api.storage.collectGarbage(activeSince: nil, now: Date()) == 0)
        }
    }

    @Test(arguments: Backend.all)
    func credentialsOfAnotherAccountCannotBeChanged(_ backend: Backend) async throws {
        try await Self.withWorld(backend) { world in
            let reply = try await world.client.send(.put, "/v1/account/credentials", token: world.bob, json: ChangeCredentialsRequest(
                currentAuthKey: APIClient.authKey(1), authKey: APIClient.authKey(3), keys: APIClient.keys))
            #expect(reply.status == .unauthorized)
            #expect(try await world.client.signIn("alice", key: 1, device: "alice-phone").status == .ok)
        }
    }

    @Test(arguments: Backend.all)
    func revokedDeviceLosesAccessAtOnce(_ backend: Backend) async throws {
        try await Self.withWorld(backend) { world in
            let phone = try await world.client.signIn("alice", key: 1, device: "alice-phone").decode(SignInResponse.self).token
            #expect(try await world.client.send(.delete, "/v1/devices/alice-phone", token: world.alice).status == .noContent)
            #expect(try await world.client.changes(token: phone).status == .unauthorized)
            let list = try await world.client.send(.get, "/v1/devices", token: world.alice).decode(DeviceListResponse.self)
            #expect(list.devices.first { $0.id.rawValue == "alice-phone" }?.revokedAt != nil)
            #expect(list.devices.first { $0.id.rawValue == "alice-laptop" }?.current == true)
        }
    }
}

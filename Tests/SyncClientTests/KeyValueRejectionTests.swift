import Foundation
import KeychainCrypto
import Logging
import SyncClient
import SyncCore
import SyncProtocol
import Testing

@Suite(.serialized)
struct KeyValueRejectionTests {
    /// The zone is in every blob's associated data: a keychain blob replayed into a key-value
    /// zone (by the server, or a token holder) does not open there and is never applied.
    @Test func aBlobMovedFromTheKeychainZoneIntoAStoreIsRejected() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.add(service: "mail", account: "kim", password: "secret")
            try await a.setValue("kept", forKey: "good", store: "app")
            try await a.sync()
            try await a.replayFirstKeychainBlob { StoreDirectory(database: nil, keys: $0).zone(ofStore: "app") }
            let result = try await b.syncClient(["sync"])
            #expect(result.status != 0)
            #expect(result.stderr.contains("rejected"))
            #expect(try await b.value(forKey: "good", store: "app") == "kept")
            let listed = try await b.keyValue(["list"], store: "app")
            #expect(listed.stdout.split(separator: "\n").count == 1)
            let found = try await b.keychain(["find-generic-password", "-s", "mail", "-a", "kim", "--sync", "yes", "-w"])
            #expect(found.stdout == "secret\n", "status \(found.status), stderr \(found.stderr); sync said: \(result.stdout) \(result.stderr)")
            // Status names the store with the rejected version.
            let status = try await b.status()
            #expect(status.keyValueStores.map(\.name) == ["app"])
            #expect(status.keyValueStores.map(\.problems.count) == [1])
            #expect(status.keyValueDirectoryProblems.isEmpty)
            #expect(try await b.syncClient(["status"]).stdout.contains("  app: 0 pending"))
        }
    }

    @Test func aBlobMovedIntoTheStoreDirectoryIsRejectedAndShownByStatus() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.add(service: "mail", account: "kim", password: "secret")
            try await a.sync()
            try await a.replayFirstKeychainBlob { _ in StoreDirectory.zone }
            let result = try await b.syncClient(["sync"])
            #expect(result.status != 0)
            let status = try await b.status()
            #expect(status.keyValueStores.isEmpty)
            #expect(status.keyValueDirectoryProblems.count == 1)
            #expect(try await b.syncClient(["status"]).stdout.contains("  store directory: 1 problem(s)"))
        }
    }
}

extension TestDevice {
    /// Uploads the keychain zone's first item, blob unchanged, into the zone `target` names (as
    /// the server, or a holder of this device's token, could).
    func replayFirstKeychainBlob(into target: @Sendable (AccountKeys) -> ZoneID) async throws {
        try await ClientSession.with(keychainPath: keychainPath, logger: Logger(label: "test")) { session in
            let page = try await session.connection.send(.GET, "/v1/zones/keychain/changes?after=0&limit=10", body: nil, as: ChangesResponse.self)
            let item = try #require(page.items.first)
            let version = try #require(item.versions.first)
            let moved = UploadItem(id: item.id, vector: version.vector, deleted: version.deleted, blob: version.blob)
            let zone = target(session.keys)
            try await session.connection.send(.POST, "/v1/zones/\(zone.rawValue)/items", body: UploadRequest(cursor: 0, items: [moved]))
        }
    }
}

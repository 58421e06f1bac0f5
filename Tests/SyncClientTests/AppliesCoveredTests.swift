import Foundation
import KeychainCrypto
import KeychainModel
import KeychainStore
import ProcessTesting
import SyncClient
import SyncCore
import Testing

/// A state committed when it held every version the keychain's applies left needs no read of
/// those versions at the next start while the keychain counts no more applies (decision 0279);
/// an apply whose state commit did not follow is found as before (decision 0107).
@Suite struct AppliesCoveredTests {
    let device = DeviceID("device-a")!
    let sealer = VersionSealer(keys: AccountKeys(accountKey: .generate()), account: "account", zone: .keychain)

    func item(_ account: String) -> Item {
        var attributes = ItemAttributes()
        attributes.service = "site"
        attributes.account = account
        attributes.synchronizable = true
        return Item(itemClass: .genericPassword, attributes: attributes, data: Array("secret".utf8))
    }

    /// Stores `item` as a pulled version (no tag) and returns its primary key as the keychain
    /// keeps it (the defaults filled in), the key an apply's tags name.
    func stored(_ item: Item, in keychain: Keychain) throws -> PrimaryKey {
        try keychain.applyRemote([.store(item)])
        return try #require(try keychain.synchronizableItems().first { $0.attributes.account == item.attributes.account }?.key)
    }

    /// A state past its first pull that holds `held` at `vector`.
    func state(holding held: [(ItemID, VersionVector)]) -> ZoneSyncState {
        var state = ZoneSyncState(device: device, zone: .keychain)
        state.cursor = 5
        for (item, vector) in held {
            let version = ItemVersion(vector: vector, isDeleted: false, modifiedAt: 1_000, device: device, content: [1])
            state.records[item] = .init(version: version, isPending: false, baseline: [vector], seen: vector)
        }
        return state
    }

    @Test func onlyAnApplyThatRecordsVersionsIsCounted() async throws {
        try await withTemporaryDirectory { directory in
            let keychain = try Keychain.open(at: directory.appendingPathComponent("keychain").path)
            #expect(try keychain.remoteApplyCount() == 0)
            let x = item("x")
            try keychain.applyRemote([.store(x)])
            #expect(try keychain.remoteApplyCount() == 0)
            try keychain.applyRemote([.store(x)], versions: RemoteVersionTags(owner: "dev", tags: [x.primaryKey: [1]]))
            try keychain.applyRemote([], versions: RemoteVersionTags(owner: "dev", tags: [:]))
            #expect(try keychain.remoteApplyCount() == 2)
            // Refused: nothing applied, nothing counted.
            #expect(throws: KeychainError.self) {
                try keychain.applyRemote([.store(item("y")), .store(Item(itemClass: .genericPassword, attributes: ItemAttributes(), data: []))],
                    versions: RemoteVersionTags(owner: "dev", tags: [:]))
            }
            #expect(try keychain.remoteApplyCount() == 2)
        }
    }

    @Test func anItemAheadIsFoundUntilAStateHoldsItAndThenNoTagIsRead() async throws {
        try await withTemporaryDirectory { directory in
            let keychain = try Keychain.open(at: directory.appendingPathComponent("keychain").path)
            let x = item("x")
            let key = try stored(x, in: keychain)
            let xID = sealer.itemID(of: key)
            let v1 = VersionVector([DeviceID("device-b")!: 1])
            try keychain.applyRemote([.store(x)], versions: RemoteVersionTags(owner: device.rawValue, tags: [key: v1.canonicalEncoding]))
            var zone = KeychainZone(keychain: keychain, sealer: sealer, device: device)

            // The apply's state commit never came: x is ahead, whatever count was committed before.
            let behind = state(holding: [])
            #expect(try zone.itemsAhead(of: behind, position: 0, appliesCovered: nil) == [xID])
            #expect(try zone.itemsAhead(of: behind, position: 0, appliesCovered: 0) == [xID])
            #expect(try zone.coveredApplies(by: behind) == nil, "a state still behind covers nothing")

            // Once a state holds x, the count is what that state covers.
            let caughtUp = state(holding: [(xID, v1)])
            #expect(try zone.coveredApplies(by: caughtUp) == 1)
            // A start with that count reads no tag of its own: were a tag still ahead (it cannot
            // be, the state holds it), the start would not see it.
            #expect(try zone.itemsAhead(of: behind, position: 0, appliesCovered: 1) == [])
            // Another apply without its state commit: the count moved, every tag is read again.
            let v2 = VersionVector([DeviceID("device-b")!: 2])
            try keychain.applyRemote([.store(x)], versions: RemoteVersionTags(owner: device.rawValue, tags: [key: v2.canonicalEncoding]))
            #expect(try zone.itemsAhead(of: caughtUp, position: 0, appliesCovered: 1) == [xID])
        }
    }

    @Test func whatAnEarlierEnrolmentLeftIsReadAtEveryStart() async throws {
        try await withTemporaryDirectory { directory in
            let keychain = try Keychain.open(at: directory.appendingPathComponent("keychain").path)
            let x = item("x")
            let key = try stored(x, in: keychain)
            let v1 = VersionVector([DeviceID("device-b")!: 1])
            try keychain.applyRemote([.store(x)], versions: RemoteVersionTags(owner: "earlier-enrolment", tags: [key: v1.canonicalEncoding]))
            var zone = KeychainZone(keychain: keychain, sealer: sealer, device: device)
            let count = try keychain.remoteApplyCount()
            // Unknown to this state and still held: a version listed later is applied to it (0194).
            #expect(try zone.itemsAhead(of: state(holding: []), position: 0, appliesCovered: count) == [sealer.itemID(of: key)])
            #expect(try zone.coveredApplies(by: state(holding: [])) == count, "not this enrolment's: the count is covered")
        }
    }
}

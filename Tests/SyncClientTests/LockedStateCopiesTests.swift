import Foundation
import KeychainCrypto
import KeychainModel
import KeychainStore
import ProcessTesting
import SyncClient
import SyncCore
import Testing

/// Decision 0237 (issue 13, item 5): the sync state keeps its copies of "when unlocked" items under
/// the item's own class. While the keychain is locked after its first unlock, a process of the user
/// holds the account key ("after first unlock") and still opens no such copy; the device syncs
/// on, its "when unlocked" items waiting for the unlock. Real processes for the device; the reads
/// of the state file are this process's, with the device's files.
@Suite(.serialized)
struct LockedStateCopiesTests {
    @Test func whileLockedTheAccountKeyOpensNoCopyOfAWhenUnlockedItem() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.add(service: "mail", account: "max", password: "when-unlocked copy")
            try await Self.addAfterFirstUnlock(a, password: "after-first-unlock copy")
            try await LockedArrivalTests.lockWithPasscode(b, afterSyncingWith: a)

            // Read before this process opens it with SQLite: closing another descriptor of the file
            // would drop SQLite's locks of this process's connection.
            let file = try Data(contentsOf: URL(fileURLWithPath: b.keychainPath + ".sync"))
            #expect(file.range(of: Data("when-unlocked copy".utf8)) == nil)
            // Locked: the account key opens, as any process of the user would open it.
            let keychain = try Keychain.open(at: b.keychainPath)
            let database = try ClientStateDatabase(keychainPath: b.keychainPath, create: false)
            let enrolment = try #require(try database.enrolment())
            let sealer = VersionSealer(
                keys: try DeviceSecrets(keychain: keychain).accountKeys(), account: enrolment.account,
                zone: .keychain)
            let (state, _) = try database.loadZone(.keychain, device: enrolment.device, sealer: sealer)
            let contents = state.records.values.map { Data($0.version.content) }
            #expect(state.records.count == 3)
            #expect(contents.contains { $0.range(of: Data("after-first-unlock copy".utf8)) != nil })
            #expect(!contents.contains { $0.range(of: Data("when-unlocked copy".utf8)) != nil })
            // With the class layer, the "when unlocked" copies stay sealed while locked.
            let layered = sealer.with(classLayer: StateClassLayer(keychain: keychain))
            let (locked, _) = try database.loadZone(.keychain, device: enrolment.device, sealer: layered)
            #expect(locked.records.values.filter { layered.isSealedAway($0.version) }.count == 2)

            // A sync-client started while locked syncs on: the "after first unlock" update is
            // applied; a new "when unlocked" item and an update of one whose copy it could not
            // open wait for the unlock.
            try await Self.addAfterFirstUnlock(a, password: "after-first-unlock, later", update: true)
            try await a.add(
                service: "mail", account: "max", password: "when-unlocked, later", update: true)
            try await a.add(service: "bank", account: "max", password: "new while locked")
            try await a.sync()
            let whileLocked = try await b.syncClient(["sync"])
            #expect(whileLocked.status == 0, "\(whileLocked.stderr)")
            let wifi = try await b.keychain([
                "find-generic-password", "-s", "wifi", "-a", "home", "--sync", "yes", "--accessible", "after-first-unlock", "-w",
            ])
            #expect(wifi.stdout == "after-first-unlock, later\n", "\(wifi.stderr)")
            #expect(try await LockedArrivalTests.waiting(b) == 2)
            // The held arrivals are sealed to a key pair of the "when unlocked" class (0238):
            // while locked they open neither with the class layer nor with the account key.
            #expect(try database.heldCount(.keychain) == 2)
            #expect(try database.heldArrivals(.keychain, layer: StateClassLayer(keychain: keychain)).isEmpty)
            #expect(try database.heldArrivals(.keychain, layer: nil).isEmpty)

            try await LockedArrivalTests.unlock(b)
            #expect(try database.heldArrivals(.keychain, layer: StateClassLayer(keychain: keychain)).count == 2)
            try await b.sync()
            #expect(try await b.password(service: "mail", account: "max") == "when-unlocked, later")
            #expect(try await b.password(service: "bank", account: "max") == "new while locked")
            #expect(try await LockedArrivalTests.waiting(b) == 0)
            #expect(try await b.syncClient(["status"]).stdout.contains("pending changes: 0"))
        }
    }

    /// A push of a "when unlocked" item whose answer never came (the server failed it), then the
    /// lock: a sync-client started while locked cannot send that batch again (its copy is sealed
    /// under the class) and says so; after the unlock it goes. Nothing of it is in the clear.
    @Test func aBatchOfAWhenUnlockedItemWaitsForTheUnlock() async throws {
        try await withProxiedAccount(["a", "b"], proxied: ["b"]) { account in
            let (a, b) = (account.devices[0], account.devices[1])
            try await LockedArrivalTests.lockWithPasscode(b, afterSyncingWith: a)
            try await LockedArrivalTests.unlock(b)
            try await b.add(service: "mail", account: "max", password: "written before the lock")
            try account.proxy.fail("POST", "/v1/zones/keychain/items", occurrence: 1)
            let failed = try await b.syncClient(["sync"])
            #expect(failed.status != 0, "\(failed.stdout)")
            #expect(try await b.keychain(["lock"]).status == 0)

            let whileLocked = try await b.syncClient(["sync"])
            #expect(whileLocked.status != 0)
            #expect(whileLocked.stderr.contains("a push of \"when unlocked\" items waits for the unlock"), "\(whileLocked.stderr)")
            let state = try Data(contentsOf: URL(fileURLWithPath: b.keychainPath + ".sync"))
            #expect(state.range(of: Data("written before the lock".utf8)) == nil)

            try await LockedArrivalTests.unlock(b)
            try await b.sync()
            try await a.sync()
            #expect(try await a.password(service: "mail", account: "max") == "written before the lock")
            #expect(try await b.syncClient(["status"]).stdout.contains("pending changes: 0"))
        }
    }

    /// The daemon pushed a "when unlocked" item and the keychain was locked before the answer
    /// came: the acknowledgement is committed while locked (the copy, unchanged, is not sealed
    /// again), so nothing stays pending.
    @Test func anAcknowledgementArrivingWhileLockedIsCommitted() async throws {
        try await withProxiedAccount(["a", "b"], proxied: ["b"]) { account in
            let (a, b) = (account.devices[0], account.devices[1])
            try await LockedArrivalTests.lockWithPasscode(b, afterSyncingWith: a)
            try await LockedArrivalTests.unlock(b)
            let daemon = try await b.startDaemon()
            defer { daemon.stop() }
            try account.proxy.hold("POST", "/v1/zones/keychain/items")
            try await b.add(service: "mail", account: "max", password: "pushed as the lock came")
            try await account.proxy.waitUntilHeld(1)
            #expect(try await b.keychain(["lock"]).status == 0)
            try account.proxy.stopHolding()
            try account.proxy.release(1)
            try await eventually(timeout: .seconds(30), "the acknowledgement to be committed while locked") {
                try await b.syncClient(["status"]).stdout.contains("pending changes: 0")
            }
            try await a.sync()
            #expect(try await a.password(service: "mail", account: "max") == "pushed as the lock came")
            #expect(daemon.stderr.contains("the keychain is locked") == false, "\(daemon.stderr)")
        }
    }

    /// A state file written before 0237 (copies under the account key alone) is sealed again,
    /// layered, by the first commit while unlocked; the state stays as it was.
    @Test func copiesWrittenWithoutTheLayerAreSealedAgain() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("keychain.db").path
            let keychain = try Keychain.open(at: path)
            let database = try ClientStateDatabase(keychainPath: path, create: true)
            let plain = VersionSealer(
                keys: AccountKeys(accountKey: .generate()), account: "account", zone: .keychain)
            let layered = plain.with(classLayer: StateClassLayer(keychain: keychain))
            let device = try #require(DeviceID("device-1"))
            var attributes = ItemAttributes()
            attributes.service = "mail"
            attributes.account = "max"
            attributes.synchronizable = true
            let content = ItemContent.encode(
                Item(itemClass: .genericPassword, attributes: attributes, data: Array("unlayered".utf8)))
            let item = ItemID("item-1")
            var state = ZoneSyncState(device: device, zone: .keychain)
            state.records[item] = ZoneSyncState.Record(
                version: ItemVersion(
                    vector: VersionVector([device: 1]), isDeleted: false, modifiedAt: 1, device: device,
                    content: content,
                    overwritten: VersionVector()),
                isPending: true, baseline: [], seen: VersionVector([device: 1]))
            try database.saveZone(state, previous: nil, progress: .init(), sealer: plain)

            var unlayered: Set<ItemID> = []
            let (loaded, progress) = try database.loadZone(
                .keychain, device: device, sealer: layered, unlayered: &unlayered)
            #expect(unlayered == [item])
            #expect(loaded.records == state.records)
            try database.saveZone(
                loaded, previous: loaded, changed: [], resealing: unlayered, progress: progress,
                sealer: layered)

            // Now the account key alone no longer opens it; with the layer it opens as before.
            let (bare, _) = try database.loadZone(.keychain, device: device, sealer: plain)
            #expect(bare.records[item]?.version.content.first == 0xC5)
            let (again, _) = try database.loadZone(
                .keychain, device: device, sealer: layered, unlayered: &unlayered)
            #expect(unlayered.isEmpty)
            #expect(again.records == state.records)
        }
    }

    static func addAfterFirstUnlock(_ device: TestDevice, password: String, update: Bool = false)
        async throws
    {
        let added = try await device.keychain(
            [
                "add-generic-password", "-s", "wifi", "-a", "home", "-w", password, "--sync",
                "--accessible", "after-first-unlock",
            ]
                + (update ? ["-U"] : []))
        guard added.status == 0 else { throw TestFailure("adding failed: \(added.stderr)") }
    }
}

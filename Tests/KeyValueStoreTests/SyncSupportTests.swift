import Foundation
import KeyValueStore
import SyncCore
import Synchronization
import Testing

@Suite struct SyncSupportTests {
    @Test func everyLocalChangeIsJournaledWithItsVersion() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let store = try stores.store()
        try store.set("1", forKey: "a")
        stores.clock.advance(by: 10)
        try store.set("2", forKey: "b")
        stores.clock.advance(by: 10)
        try store.removeValue(forKey: "a")
        try store.removeValue(forKey: "absent")
        try stores.store("other").set("x", forKey: "a")

        let entries = try store.journalEntries(after: 0)
        #expect(entries.map(\.key) == ["a", "b", "a"])
        #expect(entries.map(\.operation) == [.set, .set, .remove])
        #expect(entries.map(\.modifiedAt) == [1_700_000_000_000, 1_700_000_000_010, 1_700_000_000_020])
        #expect(entries.map(\.sequence) == entries.map(\.sequence).sorted() && Set(entries.map(\.sequence)).count == 3)
        #expect(try store.journalEntries(after: entries[0].sequence).map(\.key) == ["b", "a"])
        #expect(try store.journalEntries(after: 0, limit: 1).count == 1)

        let device = DeviceID("device-a")!
        let removed = try #require(try store.version(forKey: "a"))
        #expect(removed.isDeleted && removed.value == nil)
        #expect(removed.vector == VersionVector([device: 3]))
        #expect(removed.device == device && removed.modifiedAt == 1_700_000_000_020)
        let set = try #require(try store.version(forKey: "b"))
        #expect(set.value == .string("2") && set.vector == VersionVector([device: 2]))
        #expect(try store.version(forKey: "never") == nil)
        #expect(try store.allKeys() == ["a", "b"])
    }

    @Test func remoteVersionsAreNotJournaledAndEmitServerChangeEvents() async throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let a = try stores.store(device: "device-a")
        let b = try stores.store(device: "device-b")
        let events = ChangeRecorder(b)
        try b.set("local", forKey: "mine")
        try a.set(.integer(7), forKey: "shared")
        #expect(try b.applyRemote(try #require(try a.version(forKey: "shared"))) == .applied)
        #expect(try b.integer(forKey: "shared") == 7)
        #expect(try b.journalEntries(after: 0).map(\.key) == ["mine"])
        #expect(try b.applyRemote(try #require(try a.version(forKey: "shared"))) == .stale)

        stores.clock.advance()
        try a.removeValue(forKey: "shared")
        #expect(try b.applyRemote(try #require(try a.version(forKey: "shared")), reason: .initialSyncChange) == .applied)
        #expect(try b.value(forKey: "shared") == nil)
        #expect(try b.version(forKey: "shared")?.isDeleted == true)

        let received = await events.waitFor(2)
        #expect(received == [.init(reason: .serverChange, keys: ["shared"]), .init(reason: .initialSyncChange, keys: ["shared"])])
    }

    @Test func quotaViolationAndAccountChangeEventsFollowInOrder() async throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let a = try stores.store(device: "device-a")
        let b = try stores.store(device: "device-b")
        let events = ChangeRecorder(b)
        for index in 0..<KeyValueLimits.maximumKeys { try b.set(.bool(true), forKey: "k\(index)") }
        try a.set("from a", forKey: "extra")
        // A remote version is applied even over a limit, so every device keeps the same values.
        #expect(try b.applyRemote(try #require(try a.version(forKey: "extra"))) == .applied)
        #expect(try b.usage().keys == KeyValueLimits.maximumKeys + 1)
        #expect(throws: KeyValueStoreError.self) { try b.set(.bool(true), forKey: "more") }
        try b.resetForAccountChange()
        #expect(try b.dictionaryRepresentation().isEmpty && b.journalEntries(after: 0).isEmpty)

        let received = await events.waitFor(3)
        #expect(received.count == 3)
        #expect(received.first == .init(reason: .serverChange, keys: ["extra"]))
        #expect(received.dropFirst().first == .init(reason: .quotaViolationChange, keys: ["extra"]))
        #expect(received.last?.reason == .accountChange)
        #expect(received.last?.keys.count == KeyValueLimits.maximumKeys + 1)
        #expect(received.last?.keys == received.last?.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
    }

    @Test func syncContentHidesNothingButCarriesTheKeyForTheItemID() throws {
        let version = try KeyVersion(
            key: "greeting", value: .string("hi"), vector: VersionVector([DeviceID("d")!: 1]), modifiedAt: 5, device: DeviceID("d")!)
        #expect(try KeyVersion.decodeSyncContent(version.version.content) == (key: "greeting", value: .string("hi")))
        #expect(throws: KeyValueStoreError.self) { try KeyVersion(key: "other", version: version.version) }
        #expect(KeyValueStore.itemIDFields(forKey: "é").map(\.name) == ["key"])
        #expect(KeyValueStore.itemIDFields(forKey: "é").map(\.value) == [[0xC3, 0xA9]])
        let stores = TemporaryStores()
        defer { stores.remove() }
        #expect(try stores.database().store(named: "prefs").zone == ZoneID("kv.prefs"))
    }

    @Test func synchronizeAsksTheAttachedEngine() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let store = try stores.store()
        #expect(store.synchronize())
        let engine = RecordingEngine(accepts: false)
        store.attach(engine)
        #expect(store.synchronize() == false)
        #expect(engine.requests == [ZoneID("kv.com.example.app")])
        store.detachEngine()
        #expect(store.synchronize())
    }
}

/// A sync engine that records the zones it was asked to sync.
final class RecordingEngine: KeyValueSyncEngine {
    private let zones = Mutex<[ZoneID]>([])
    let accepts: Bool

    init(accepts: Bool) { self.accepts = accepts }

    var requests: [ZoneID] { zones.withLock { $0 } }

    func requestSync(of zone: ZoneID) -> Bool {
        zones.withLock { $0.append(zone) }
        return accepts
    }
}

import Crypto
import Foundation
import KeyValueStore
import SyncCore
import Testing

/// The adapter the sync client needs (docs/decisions/0062), driven here against SyncCore's
/// in-memory server model: real stores, the real zone machine, no network and no encryption
/// (item IDs are a plain hash here, HMAC in the product; blobs are JSON here, AES-GCM there).
struct ZoneSyncAdapter {
    let store: KeyValueStore
    var machine: ZoneSyncMachine
    var consumed: Int64 = 0

    init(store: KeyValueStore, device: DeviceID) {
        self.store = store
        machine = ZoneSyncMachine(device: device, zone: store.zone)
    }

    func itemID(_ key: String) -> ItemID {
        let fields = KeyValueStore.itemIDFields(forKey: key)
        let digest = SHA256.hash(data: Array(store.zone.rawValue.utf8) + [0] + fields[0].value)
        return ItemID(digest.map { String(format: "%02x", $0) }.joined())
    }

    /// Feeds the journal to the machine and adopts the machine's versions of local writes.
    mutating func feedJournal() throws {
        for entry in try store.journalEntries(after: consumed) {
            let current = try store.version(forKey: entry.key)
            let item = itemID(entry.key)
            _ = machine.localChange(LocalChange(
                item: item, scope: .synchronizable, content: current?.value.map { KeyVersion.syncContent(key: entry.key, value: $0) },
                modifiedAt: current?.modifiedAt ?? entry.modifiedAt))
            if let record = machine.state.records[item] { try store.adoptLocalVersion(KeyVersion(key: entry.key, version: record.version)) }
            consumed = entry.sequence
        }
    }

    /// One round against `server`, performing every action of the machine.
    mutating func sync(with server: inout ServerModel, now: Int64) throws {
        try feedJournal()
        let reason: KeyValueChange.Reason = machine.state.cursor == 0 ? .initialSyncChange : .serverChange
        var actions = machine.startSync()
        while !actions.isEmpty {
            switch actions.removeFirst() {
            case .push(let batch):
                actions += machine.receive(server.push(try batch.map(Self.seal), now: now))
            case .pull(let request):
                actions += machine.receive(try server.pull(request, now: now).map(Self.open))
            case .store(_, let version):
                let key = try KeyVersion.decodeSyncContent(version.content).key
                try store.applyRemote(KeyVersion(key: key, version: version), reason: reason)
            case .remove(let item):
                guard let key = try store.allKeys().first(where: { itemID($0) == item }),
                    let tombstone = machine.state.records[item]?.version, tombstone.isDeleted
                else { continue }
                try store.applyRemote(KeyVersion(key: key, version: tombstone), reason: reason)
            case .keepInHistory, .reject, .unlisted, .synced:
                continue
            }
        }
        // A resolution with the value the store already shows needs no `.store` action; take its
        // vector anyway (silently: the value does not change) so both compare the same vectors.
        let keys = Dictionary(try store.allKeys().map { (itemID($0), $0) }, uniquingKeysWith: { first, _ in first })
        for (item, record) in machine.state.records where !record.isPending {
            guard let key = keys[item] else { continue }
            try store.applyRemote(KeyVersion(key: key, version: record.version), reason: reason)
        }
    }

    static func seal(_ version: ItemVersion) throws -> SealedVersion {
        SealedVersion(vector: version.vector, isDeleted: version.isDeleted, payload: Array(try JSONEncoder().encode(version)))
    }

    static func open(_ sealed: SealedVersion) throws -> ItemVersion {
        try JSONDecoder().decode(ItemVersion.self, from: Data(sealed.payload))
    }
}

@Suite struct ZoneSyncAdapterTests {
    @Test func storesConvergeThroughTheZoneMachineAndAServer() async throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let (clockA, clockB) = (ManualClock(1_000), ManualClock(1_000))
        let databaseA = try stores.database("device-a", clock: clockA)
        let databaseB = try stores.database("device-b", clock: clockB)
        var a = ZoneSyncAdapter(store: try databaseA.store(named: "app"), device: databaseA.device)
        var b = ZoneSyncAdapter(store: try databaseB.store(named: "app"), device: databaseB.device)
        let eventsB = ChangeRecorder(b.store)
        var server = ServerModel()
        server.register(databaseA.device, now: 0)
        server.register(databaseB.device, now: 0)

        // A value set on one device is read on the other, as an initial sync.
        try a.store.set("hello", forKey: "greeting")
        try a.store.set(.array([.integer(1), .bool(true)]), forKey: "list")
        try a.sync(with: &server, now: 1)
        try b.sync(with: &server, now: 2)
        #expect(try b.store.string(forKey: "greeting") == "hello")
        #expect(try b.store.array(forKey: "list") == [.integer(1), .bool(true)])

        // Concurrent sets converge on the later one everywhere.
        clockA.advance(by: 100)
        clockB.advance(by: 200)
        try a.store.set("from a", forKey: "greeting")
        try b.store.set("from b", forKey: "greeting")
        for round in 0..<2 {
            try a.sync(with: &server, now: Int64(10 + round * 2))
            try b.sync(with: &server, now: Int64(11 + round * 2))
        }
        #expect(try a.store.string(forKey: "greeting") == "from b")
        #expect(try b.store.string(forKey: "greeting") == "from b")

        // A removal propagates.
        clockA.advance(by: 1_000)
        try a.store.removeValue(forKey: "list")
        try a.sync(with: &server, now: 20)
        try b.sync(with: &server, now: 21)
        #expect(try b.store.value(forKey: "list") == nil)
        #expect(try a.store.dictionaryRepresentation() == b.store.dictionaryRepresentation())
        #expect(try a.store.dictionaryRepresentation() == ["greeting": .string("from b")])
        // Both stores hold exactly the machine's version of every key: one version, same vector.
        for adapter in [a, b] {
            for key in ["greeting", "list"] {
                let mine = try adapter.store.siblingVersions(forKey: key).map(\.version)
                let machines = adapter.machine.state.records[adapter.itemID(key)]?.version
                #expect(mine == [machines], "\(key) \(adapter.machine.state.device): \(mine.map { ($0.vector, $0.isDeleted, $0.modifiedAt) }) vs \(String(describing: machines.map { ($0.vector, $0.isDeleted, $0.modifiedAt) }))")
            }
        }

        let received = await eventsB.waitFor(3)
        #expect(received.first?.reason == .initialSyncChange)
        #expect(Set(received.prefix(2).flatMap(\.keys)) == ["greeting", "list"])
        #expect(received.last == .init(reason: .serverChange, keys: ["list"]))
    }
}

import Foundation
import KeyValueStore
import SyncCore
import Testing

/// The store side of the sync client's mirror (docs/decisions/0070): device binding, handing
/// local changes over atomically, and engine versions that never override an untaken change.
@Suite struct MirrorTests {
    private let device = DeviceID("enrolled-device")!

    @Test func bindingAttributesEarlierWritesAndLaterWritesOfEveryHandle() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let path = stores.keychainPath("device")
        let first = try KeyValueDatabase.open(besideKeychainAt: path, configuration: .init(now: stores.clock.now))
        let other = try KeyValueDatabase.open(besideKeychainAt: path, configuration: .init(now: stores.clock.now))
        let random = first.device
        try first.store(named: "app").set("before", forKey: "a")
        #expect(try first.store(named: "app").version(forKey: "a")?.device == random)

        #expect(try other.bind(toDevice: device))
        #expect(try !other.bind(toDevice: device))
        #expect(other.device == device)
        #expect(try first.store(named: "app").version(forKey: "a")?.device == device)
        // The handle opened before the binding writes as the bound device too (another process).
        try first.store(named: "app").set("after", forKey: "b")
        #expect(try first.store(named: "app").version(forKey: "b")?.device == device)
        #expect(try KeyValueDatabase.open(besideKeychainAt: path).device == device)
    }

    @Test func takenLocalChangesBecomeTheEnginesVersionsInOneStep() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let store = try stores.store()
        try store.set("1", forKey: "a")
        try store.set("2", forKey: "a")
        try store.set("x", forKey: "b")
        try store.removeValue(forKey: "b")
        let engineVector = VersionVector([device: 7])
        var offered: [String: String] = [:]
        let last = try store.takeLocalChanges(after: 0) { key, current, modifiedAt in
            offered[key] = current.map { $0.value?.stringValue ?? "removed" } ?? "never"
            guard let value = current?.value else { return nil }
            return try? KeyVersion(key: key, value: value, vector: engineVector, modifiedAt: modifiedAt, device: device).version
        }
        #expect(offered == ["a": "2", "b": "removed"])
        #expect(last == (try store.journalEntries(after: 0).last?.sequence))
        // "a" holds exactly the engine's version; "b", a removal the engine never had, is gone.
        #expect(try store.siblingVersions(forKey: "a").map(\.vector) == [engineVector])
        #expect(try store.string(forKey: "a") == "2")
        #expect(try store.allKeys() == ["a"])
        #expect(try store.takeLocalChanges(after: #require(last)) { _, _, _ in nil } == nil)
    }

    @Test func theMachinesVersionsReplaceTheStoresButNothingIsAppliedOverALocalChangeNotYetTaken() async throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let store = try stores.store()
        let events = ChangeRecorder(store)
        try store.set("local", forKey: "k")
        let taken = try #require(try store.journalEntries(after: 0).last?.sequence)
        try store.set("newer local", forKey: "k")
        let remote = try KeyVersion(
            key: "k", value: .string("remote"), vector: VersionVector([device: 50]), modifiedAt: 1_800_000_000_000, device: device)
        let other = try KeyVersion(key: "o", value: .string("other"), vector: VersionVector([device: 51]), modifiedAt: 1, device: device)

        // One transaction: a key changed locally after the position keeps the whole batch out.
        #expect(try store.applyResolved([other, remote], reason: .serverChange, basedOnJournal: taken) == ["k"])
        #expect(try store.string(forKey: "k") == "newer local")
        #expect(try store.value(forKey: "o") == nil)
        let latest = try #require(try store.journalEntries(after: 0).last?.sequence)
        #expect(try store.applyResolved([other, remote], reason: .serverChange, basedOnJournal: latest).isEmpty)
        #expect(try store.string(forKey: "k") == "remote")
        #expect(try store.string(forKey: "o") == "other")
        // The machine's version replaces the store's even when the store's vector is larger:
        // the machine resolved the key (after a full resync it may return to an older version).
        let older = try KeyVersion(key: "k", value: .string("older"), vector: VersionVector([device: 2]), modifiedAt: 1, device: device)
        #expect(try store.applyResolved([older], reason: .serverChange, basedOnJournal: latest).isEmpty)
        #expect(try store.siblingVersions(forKey: "k") == [older])
        #expect(await events.waitFor(3) == [
            KeyValueChange(reason: .serverChange, keys: ["o"]), KeyValueChange(reason: .serverChange, keys: ["k"]),
            KeyValueChange(reason: .serverChange, keys: ["k"]),
        ])
    }

    /// Decision 0186: the keys whose value the server has, as the last sync left them, are what
    /// a device that lost its sync state must not push again as its own writes.
    @Test func valuesTheServerHasAreMarkedUntilALocalWrite() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let store = try stores.store()
        let pulled = try KeyVersion(key: "p", value: .string("pulled"), vector: VersionVector([device: 3]), modifiedAt: 1, device: device)
        #expect(try store.applyResolved([pulled], reason: .serverChange, basedOnJournal: 0).isEmpty)
        try store.set("mine", forKey: "m")
        let taken = try #require(try store.journalEntries(after: 0).last?.sequence)
        let engineVector = VersionVector([device: 9])
        _ = try store.takeLocalChanges(after: 0) { key, current, modifiedAt in
            try? KeyVersion(key: key, value: #require(current?.value), vector: engineVector, modifiedAt: modifiedAt, device: device).version
        }
        // Taken but not yet pushed: not marked.
        #expect(try store.syncedKeys() == ["p"])
        // Pushed with another value than the store shows: not marked; with its version: marked.
        try store.applyResolved([], pushed: ["m": pulled.version], reason: .serverChange, basedOnJournal: taken)
        #expect(try store.syncedKeys() == ["p"])
        try store.applyResolved([], pushed: ["m": try shown("m", in: store)], reason: .serverChange, basedOnJournal: taken)
        #expect(try store.syncedKeys() == ["m", "p"])
        // A local write drops the mark, and a push answered after it does not set it again.
        try store.set("changed", forKey: "p")
        try store.applyResolved([], pushed: ["p": pulled.version], reason: .serverChange, basedOnJournal: taken)
        #expect(try store.syncedKeys() == ["m"])
        // A removed key holds no value to bring back.
        try store.removeValue(forKey: "m")
        #expect(try store.syncedKeys().isEmpty)
    }

    /// Decision 0253: of the values the server has, those this device pushed are known as such
    /// (whole, as they were sent), so a device back without its sync state pushes them again as
    /// those versions; an apply of the same version does not unmark it, a later one does.
    @Test func valuesPushedFromHereAreKnownAsSent() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let store = try stores.store()
        let vector = VersionVector([device: 9])
        let taken = try setAndTake("mine", forKey: "m", as: vector, in: store)
        #expect(try store.pushedVersions().isEmpty)
        try store.applyResolved([], pushed: ["m": try shown("m", in: store)], reason: .serverChange, basedOnJournal: taken)
        let sent = try #require(try store.pushedVersions()["m"])
        #expect(sent.vector == vector && sent.device == device)
        #expect(try store.syncedKeys() == ["m"])
        // Pulled back unchanged: still this device's; replaced by a later version: the server's.
        let same = try KeyVersion(key: "m", version: sent)
        try store.applyResolved([same], reason: .serverChange, basedOnJournal: taken)
        #expect(try store.pushedVersions().keys.sorted() == ["m"])
        let later = try KeyVersion(key: "m", value: .string("theirs"), vector: VersionVector([device: 9, DeviceID("other")!: 1]), modifiedAt: 9, device: device)
        try store.applyResolved([later], reason: .serverChange, basedOnJournal: taken)
        #expect(try store.pushedVersions().isEmpty)
        #expect(try store.syncedKeys() == ["m"])
    }

    /// Decision 0247 for key-value stores: a value sent whose answer never came is known as sent,
    /// so a device back without its sync state pushes it again as that version (a new write would
    /// be concurrent with a removal made over it, and an update beats a concurrent removal); it
    /// is not a value the server has; a local write since unmarks it.
    @Test func aValueSentWithoutAnAnswerIsKnownAsSent() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let store = try stores.store()
        let vector = VersionVector([device: 4])
        let taken = try setAndTake("mine", forKey: "m", as: vector, in: store)
        try store.applyResolved([], sent: ["m": try shown("m", in: store)], reason: .serverChange, basedOnJournal: taken)
        #expect(try store.pushedVersions()["m"]?.vector == vector)
        #expect(try store.syncedKeys().isEmpty)
        try store.set("changed", forKey: "m")
        #expect(try store.pushedVersions().isEmpty)
    }

    /// A value pushed from here, taken again as a local change by a device back without its sync
    /// state (the engine's record of it written over the same version), is still known as pushed
    /// and as a version the server has: losing its state once more before it pushes, the device
    /// takes it again as that version, not as a new write that would undo a removal made over it
    /// (simulation seed 259 at 400 operations).
    @Test func aValueTakenAgainAsTheSameVersionKeepsItsMarks() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let store = try stores.store()
        let vector = VersionVector([device: 4])
        let taken = try setAndTake("mine", forKey: "m", as: vector, in: store)
        let version = try shown("m", in: store)
        try store.applyResolved([], pushed: ["m": version], sent: ["m": version], reason: .serverChange, basedOnJournal: taken)
        let pushed = try #require(try store.pushedVersions()["m"])
        // The engine takes it again (its position lost with the state): the same version, now
        // with the origin the engine records.
        _ = try store.takeLocalChanges(after: 0) { _, _, _ in
            var again = pushed
            again.origin = vector
            return again
        }
        #expect(try store.pushedVersions()["m"]?.vector == vector)
        #expect(try store.syncedKeys() == ["m"])
    }

    /// A conflict resolved here in favour of the value the store shows is pushed under a vector
    /// no apply stores (the value does not change): the pushed version becomes the store's, so a
    /// device back without its sync state pushes it again as that version, not as a new write
    /// that beats a removal made over it elsewhere (malicious seed 2 at 400 operations).
    @Test func aResolutionThatKeptTheShownValueIsKnownAsPushed() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let store = try stores.store()
        let taken = try setAndTake("mine", forKey: "m", as: VersionVector([device: 1]), in: store)
        let resolution = try shown("m", in: store).with(vector: VersionVector([device: 2, DeviceID("other-device")!: 1]))
        try store.applyResolved([], sent: ["m": resolution], reason: .serverChange, basedOnJournal: taken)
        #expect(try store.pushedVersions()["m"] == resolution)
        #expect(try store.syncedKeys().isEmpty)
        try store.applyResolved([], pushed: ["m": resolution], reason: .serverChange, basedOnJournal: taken)
        #expect(try store.pushedVersions()["m"] == resolution)
        #expect(try store.syncedKeys() == ["m"])
        #expect(try store.string(forKey: "m") == "mine")
    }

    /// The one version the store holds for `key`.
    private func shown(_ key: String, in store: KeyValueStore) throws -> ItemVersion {
        try #require(try store.siblingVersions(forKey: key).first).version
    }

    /// Sets `value` for `key` and lets the engine take it as a version with `vector`; returns
    /// the journal sequence taken.
    private func setAndTake(_ value: String, forKey key: String, as vector: VersionVector, in store: KeyValueStore) throws -> Int64 {
        try store.set(value, forKey: key)
        _ = try store.takeLocalChanges(after: 0) { key, current, modifiedAt in
            try? KeyVersion(key: key, value: #require(current?.value), vector: vector, modifiedAt: modifiedAt, device: device).version
        }
        return try #require(try store.journalEntries(after: 0).last?.sequence)
    }

    @Test func theVectorsTakenFromTheEngineLeaveOutLocalChangesNotYetTaken() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let store = try stores.store()
        let remote = try KeyVersion(key: "r", value: .bool(true), vector: VersionVector([device: 7]), modifiedAt: 5, device: device)
        try store.applyResolved([remote], reason: .serverChange, basedOnJournal: 0)
        try store.set("local", forKey: "l")
        let pulled = KeyValueStore.Taken(vector: VersionVector([device: 7]), serverVector: VersionVector([device: 7]))
        #expect(try store.takenVectors(notChangedAfter: 0) == ["r": pulled])
        let latest = try #require(try store.journalEntries(after: 0).last?.sequence)
        #expect(Set(try store.takenVectors(notChangedAfter: latest).keys) == ["r", "l"])
    }

    /// Decision 0242: a conflict resolved here, its resolution not pushed yet, is not a version the
    /// server has: a device back without its sync state neither holds it as the server's value
    /// nor refuses the server's older listing because of it. Once pushed, it is the server's.
    @Test func aResolutionNotPushedYetIsNotTheServers() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let store = try stores.store()
        let other = DeviceID("other-device")!
        let resolution = try KeyVersion(
            key: "k", value: .string("theirs"), vector: VersionVector([device: 4, other: 2]), modifiedAt: 5, device: other)
        #expect(try store.applyResolved([resolution], notOnServer: ["k"], reason: .serverChange, basedOnJournal: 0).isEmpty)
        #expect(try store.string(forKey: "k") == "theirs")
        #expect(try store.syncedKeys().isEmpty)
        #expect(try store.takenVectors(notChangedAfter: 0) == ["k": .init(vector: VersionVector([device: 4, other: 2]), serverVector: nil)])
        // Applied again while still pending: still not the server's.
        try store.applyResolved([resolution], notOnServer: ["k"], reason: .serverChange, basedOnJournal: 0)
        #expect(try store.syncedKeys().isEmpty)
        try store.applyResolved([], pushed: ["k": resolution.version], reason: .serverChange, basedOnJournal: 0)
        #expect(try store.syncedKeys() == ["k"])
        #expect(try store.takenVectors(notChangedAfter: 0)["k"]?.serverVector == VersionVector([device: 4, other: 2]))
    }
}

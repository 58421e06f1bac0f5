import Foundation
import KeyValueStore
import SyncCore
import Testing

@Suite struct ConflictRuleTests {
    /// Every ordering of `items`.
    static func permutations<T>(_ items: [T]) -> [[T]] {
        guard let first = items.first else { return [[]] }
        return permutations(Array(items.dropFirst())).flatMap { rest in
            (0...rest.count).map { index in var copy = rest; copy.insert(first, at: index); return copy }
        }
    }

    @Test func everyOrderOfArrivalGivesTheSameValueAndVersion() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let (clockA, clockB, clockC) = (ManualClock(150), ManualClock(100), ManualClock(200))
        let a = try stores.store(device: "device-a", clock: clockA)
        let b = try stores.store(device: "device-b", clock: clockB)
        let c = try stores.store(device: "device-c", clock: clockC)
        try a.set("a1", forKey: "k")
        let a1 = try #require(try a.version(forKey: "k"))
        try b.set("b", forKey: "k")
        let vb = try #require(try b.version(forKey: "k"))
        try c.set(.integer(3), forKey: "k")
        let vc = try #require(try c.version(forKey: "k"))
        // A saw B's value, then overwrote it with a clock that runs behind.
        try a.applyRemote(vb)
        clockA.advance(by: -30)
        try a.set("a2", forKey: "k")
        let a2 = try #require(try a.version(forKey: "k"))

        let orders = Self.permutations([a1, vb, vc, a2])
        #expect(orders.count == 24)
        let database = try stores.database("observer")
        var results: Set<KeyVersion> = []
        for (index, order) in orders.enumerated() {
            let observer = try database.store(named: "observer-\(index)")
            for version in order { try observer.applyRemote(version) }
            let resolved = try #require(try observer.version(forKey: "k"))
            results.insert(resolved)
            // The latest modification time among the versions not overwritten wins: C's (200).
            #expect(try observer.value(forKey: "k") == .integer(3))
            #expect(try observer.siblingVersions(forKey: "k").count == 2)
            #expect(try observer.journalEntries(after: 0).isEmpty)
        }
        #expect(results.count == 1)
    }

    @Test func equalTimesAreBrokenByTheGreaterDeviceIDOnBothDevices() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let low = try stores.store(device: "device-a")
        let high = try stores.store(device: "device-z")
        try low.set("from a", forKey: "k")
        try high.set("from z", forKey: "k")
        let fromLow = try #require(try low.version(forKey: "k"))
        let fromHigh = try #require(try high.version(forKey: "k"))
        #expect(try low.applyRemote(fromHigh) == .applied)
        #expect(try high.applyRemote(fromLow) == .lost)
        #expect(try low.string(forKey: "k") == "from z")
        #expect(try high.string(forKey: "k") == "from z")
        #expect(try low.version(forKey: "k") == high.version(forKey: "k"))
    }

    @Test func laterModificationTimeWinsWhicheverDeviceWrote() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let (early, late) = (ManualClock(1_000), ManualClock(2_000))
        let z = try stores.store(device: "device-z", clock: early)
        let a = try stores.store(device: "device-a", clock: late)
        try z.set(.double(1), forKey: "k")
        try a.set(.double(2), forKey: "k")
        try z.applyRemote(try #require(try a.version(forKey: "k")))
        try a.applyRemote(try #require(try z.version(forKey: "k")))
        #expect(try z.double(forKey: "k") == 2)
        #expect(try a.double(forKey: "k") == 2)
    }

    @Test func aRemovalPropagatesAndALaterWriteOverItComesBack() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let a = try stores.store(device: "device-a")
        let b = try stores.store(device: "device-b")
        try a.set("v", forKey: "k")
        try b.applyRemote(try #require(try a.version(forKey: "k")))
        stores.clock.advance()
        try a.removeValue(forKey: "k")
        let tombstone = try #require(try a.version(forKey: "k"))
        #expect(try b.applyRemote(tombstone) == .applied)
        #expect(try b.value(forKey: "k") == nil)
        // The stale set (already seen before the removal) never comes back.
        #expect(try b.applyRemote(try #require(try b.siblingVersions(forKey: "k").first)) == .stale)
        stores.clock.advance()
        try b.set("again", forKey: "k")
        #expect(try a.applyRemote(try #require(try b.version(forKey: "k"))) == .applied)
        #expect(try a.string(forKey: "k") == "again")
    }

    @Test func anUpdateBeatsAConcurrentRemovalAsSyncCoreResolves() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let (early, late) = (ManualClock(1_000), ManualClock(2_000))
        let a = try stores.store(device: "device-a", clock: late)
        let b = try stores.store(device: "device-b", clock: early)
        try a.set("base", forKey: "k")
        try b.applyRemote(try #require(try a.version(forKey: "k")))
        try a.removeValue(forKey: "k")
        try b.set("kept", forKey: "k")
        try a.applyRemote(try #require(try b.version(forKey: "k")))
        try b.applyRemote(try #require(try a.version(forKey: "k")))
        #expect(try a.string(forKey: "k") == "kept")
        #expect(try b.string(forKey: "k") == "kept")
    }
}

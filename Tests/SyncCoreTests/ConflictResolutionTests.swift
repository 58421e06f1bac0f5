import SyncCore
import Testing

@Suite("Deterministic conflict resolution")
struct ConflictResolutionTests {
    typealias F = Fixtures
    let a = Fixtures.a, b = Fixtures.b, c = Fixtures.c

    @Test func updateBeatsDeleteThenLaterTimeThenGreaterDevice() {
        let deletion = F.write(nil, by: b, [b: 1], at: 9_000)
        let early = F.write(1, by: b, [b: 2], at: 1_000)
        let late = F.write(2, by: a, [a: 1], at: 2_000)
        let tie = F.write(3, by: b, [b: 3], at: 2_000)
        #expect(ConflictResolution.resolve([deletion, early]) == early)
        #expect(ConflictResolution.resolve([early, late]) == late)
        #expect(ConflictResolution.resolve([late, tie]) == tie)
        #expect(ConflictResolution.resolve([]) == nil)
    }

    @Test func aValueAUserDeletedStaysDeletedEvenWhenTheDeletionLostToAConcurrentUpdate() {
        let deleted = F.write(53, by: b, [b: 1], at: 5_000)
        let deletion = F.write(nil, by: b, [b: 2], at: 6_000, overwritten: [b: 1])
        let concurrent = F.write(47, by: a, [a: 1], at: 1_000)
        // Device B resolves {concurrent, deletion}: the update wins, and remembers what B deleted.
        let byB = ConflictResolution.resolution(of: [concurrent, deletion], vector: VersionVector([a: 1, b: 3]))!
        // Device C never saw the deletion and resolves {concurrent, deleted}: the later one wins.
        let byC = ConflictResolution.resolution(of: [concurrent, deleted], vector: VersionVector([a: 1, b: 1, c: 1]))!
        #expect(byB.sameValue(as: concurrent) && byC.sameValue(as: deleted))
        #expect(byB.overwritten == VersionVector([b: 1]))
        // When the two resolutions meet, the deleted value must not come back.
        #expect(ConflictResolution.resolve([byC, byB])?.sameValue(as: concurrent) == true)
        #expect(ConflictResolution.contenders([byC, byB]) == [byB])
    }

    @Test func whenEveryValueWasDeletedByAUserTheItemStaysDeletedAndBothValuesGoToHistory() throws {
        let fromB = F.write(3, by: b, [b: 2], at: 1_000)
        let fromA = F.write(17, by: a, [a: 3], at: 2_000)
        // B deleted its value 3 and, seeing {3, 17}, let 17 win over its deletion; A deleted 17 and,
        // seeing {3, A's deletion}, let 3 win. Each deletion lost to an update the other deleted.
        let deletedByB = F.write(nil, by: b, [b: 8], at: 1_500, overwritten: [b: 2])
        let deletedByA = F.write(nil, by: a, [a: 9], at: 2_500, overwritten: [a: 3])
        let byB = try #require(ConflictResolution.resolution(of: [fromA, deletedByB], vector: VersionVector([a: 3, b: 14])))
        let byA = try #require(ConflictResolution.resolution(of: [fromB, deletedByA], vector: VersionVector([a: 22, b: 2])))
        #expect(byB.sameValue(as: fromA) && byA.sameValue(as: fromB))
        #expect(ConflictResolution.contenders([byA, byB]).isEmpty)
        let resolved = try #require(ConflictResolution.resolve([byA, byB]))
        #expect(resolved.isDeleted)
        #expect(ConflictResolution.resolve([byB, byA]) == resolved)
        var machine = ZoneSyncMachine(device: c, zone: .keychain)
        _ = machine.startSync()
        let actions = machine.receive(F.page(1, [(ItemID("x"), 7, [byA, byB])], next: 7))
        #expect(Array(actions.prefix(2)) == [.keepInHistory(ItemID("x"), byA), .keepInHistory(ItemID("x"), byB)])
        guard case .push(let batch) = actions.last else {
            Issue.record("expected the deletion to be pushed")
            return
        }
        #expect(batch.items.first?.version.isDeleted == true)
    }

    /// A random set of siblings: user writes over random subsets of earlier ones, maximal ones kept.
    static func siblings(seed: UInt64) -> [ItemVersion] {
        var random = TestRandom(seed: seed)
        let writers = [Fixtures.a, Fixtures.b, Fixtures.c, DeviceID("device-d")!]
        var counters: [DeviceID: UInt64] = [:]
        var versions: [ItemVersion] = []
        for _ in 0..<Int.random(in: 2...10, using: &random) {
            let device = writers.randomElement(using: &random)!
            let seen = VersionVector.join(versions.filter { _ in Bool.random(using: &random) }.map(\.vector))
            let counter = max(counters[device, default: 0], seen[device]) + 1
            counters[device] = counter
            let content: UInt8? = Int.random(in: 0..<4, using: &random) == 0 ? nil : UInt8.random(in: 0...255, using: &random)
            versions.append(F.write(content, by: device, seen.written(by: device, counter: counter).counters,
                at: Int64.random(in: 0...5, using: &random), overwritten: seen.counters))
        }
        let maximal = ConflictResolution.maximal(versions)
        guard maximal.count < 2 else { return maximal }
        return maximal + [F.write(9, by: DeviceID("device-e")!, [DeviceID("device-e")!: 1], at: 3)]
    }

    @Test(arguments: 0..<60 as Range<UInt64>)
    func theWinnerDoesNotDependOnArrivalOrder(seed: UInt64) throws {
        var random = TestRandom(seed: ~seed)
        let siblings = Self.siblings(seed: seed)
        let winner = try #require(ConflictResolution.resolve(siblings))
        for _ in 0..<6 {
            #expect(ConflictResolution.resolve(siblings.shuffled(using: &random)) == winner)
        }
    }

    /// Two devices pull the same siblings in different orders, resolve them independently and
    /// push; the server keeps both resolutions; the next round settles without another write.
    @Test(arguments: 0..<60 as Range<UInt64>)
    func everyDeviceResolvesTheSameAndTheNextRoundSettles(seed: UInt64) throws {
        var random = TestRandom(seed: seed &+ 77)
        let siblings = Self.siblings(seed: seed)
        try #require(siblings.count > 1)
        var resolutions: [ItemVersion] = []
        var machines: [ZoneSyncMachine] = []
        for name in ["resolver-1", "resolver-2"] {
            var machine = ZoneSyncMachine(device: DeviceID(name)!, zone: .keychain)
            guard case .pull(let request) = machine.startSync().first else { throw Unexpected() }
            let page = PullResponse.changes(
                requestID: request.requestID,
                items: [ChangedItem(item: ItemID("x"), sequence: 9, versions: siblings.shuffled(using: &random))],
                nextCursor: 9, hasMore: false
            )
            let actions = machine.receive(page)
            guard case .push(let batch) = actions.last, let resolved = batch.items.first?.version else { throw Unexpected() }
            for sibling in siblings { #expect(resolved.vector.compare(to: sibling.vector) == .dominates) }
            let storeCount = actions.filter { if case .store = $0 { true } else { false } }.count
            #expect(storeCount == (resolved.isDeleted ? 0 : 1))
            resolutions.append(resolved)
            machines.append(machine)
        }
        #expect(resolutions[0].sameValue(as: resolutions[1]))
        #expect(resolutions[0].vector.compare(to: resolutions[1].vector) == .concurrent)
        let stored = resolutions.reduce(into: [SealedVersion]()) { stored, resolution in
            let sealed = SealedVersion(vector: resolution.vector, isDeleted: resolution.isDeleted, payload: [])
            stored = ServerMerge.merge(sealed, into: stored).siblings
        }
        #expect(stored.count == 2)
        for index in machines.indices {
            guard case .pull(let request) = machines[index].receive(F.committed(1, [(ItemID("x"), .conflictKept)])).first else {
                throw Unexpected()
            }
            let page = PullResponse.changes(
                requestID: request.requestID, items: [ChangedItem(item: ItemID("x"), sequence: 11, versions: resolutions)],
                nextCursor: 11, hasMore: false
            )
            #expect(machines[index].receive(page) == [.synced])
        }
    }

    struct Unexpected: Error {}
}

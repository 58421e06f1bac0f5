import SyncCore
import Testing

/// Transcripts of a push refused because of some of its items (B2, decision 0105).
@Suite("Client sync machine: per-item refusals")
struct ZoneSyncMachineRefusalTests {
    typealias F = Fixtures
    let a = Fixtures.a
    let x = ItemID("x"), y = ItemID("y")

    @Test func aRefusedItemIsSetAsideAndTheRestIsPushedInTheSameRound() {
        var machine = ZoneSyncMachine(device: a, zone: .keychain)
        let vx = F.write(1, by: a, [a: 1], at: 1_000)
        let vy = F.write(2, by: a, [a: 2], at: 1_000)
        _ = machine.localChange(F.change(x, 1, at: 1_000))
        _ = machine.localChange(F.change(y, 2, at: 1_000))
        #expect(machine.startSync() == [F.push(a, batch: 1, cursor: 0, [(x, vx), (y, vy)])])
        let refused = PushResponse(batchID: 1, status: .refused, results: [], refused: .init(reason: .tooLarge, items: [x]))
        #expect(machine.receive(refused) == [F.push(a, batch: 2, cursor: 0, [(y, vy)])])
        #expect(machine.receive(F.committed(2, [(y, .applied)])) == [F.pull(a, 1, after: 0)])
        #expect(machine.receive(F.page(1, [(y, 1, [vy])], next: 1)) == [.synced])
        #expect(machine.state.records[x]?.refusal == .tooLarge)
        #expect(!machine.hasPendingChanges)
        // Still aside in the next round; a new local change puts it back.
        #expect(machine.startSync() == [F.pull(a, 2, after: 1)])
        #expect(machine.receive(F.page(2, [], next: 1)) == [.synced])
        _ = machine.localChange(F.change(x, 3, at: 2_000))
        #expect(machine.state.records[x]?.refusal == nil)
        #expect(machine.hasPendingChanges)
    }

    @Test func aQuotaRefusalIsRetriedAndATooLargeOneIsNot() {
        var machine = ZoneSyncMachine(device: a, zone: .keychain)
        _ = machine.localChange(F.change(x, 1, at: 1_000))
        _ = machine.localChange(F.change(y, 2, at: 1_000))
        machine.setAside(x, because: .tooLarge)
        machine.setAside(y, because: .quotaExceeded)
        #expect(!machine.hasPendingChanges)
        #expect(machine.retrySetAside() == [y])
        #expect(machine.state.records[x]?.refusal == .tooLarge)
        #expect(machine.hasPendingChanges)
    }

    @Test func aRefusalNamingNoItemOfTheBatchSetsNothingAside() {
        var machine = ZoneSyncMachine(device: a, zone: .keychain)
        let vx = F.write(1, by: a, [a: 1], at: 1_000)
        _ = machine.localChange(F.change(x, 1, at: 1_000))
        #expect(machine.startSync() == [F.push(a, batch: 1, cursor: 0, [(x, vx)])])
        let refused = PushResponse(batchID: 1, status: .refused, results: [], refused: .init(reason: .quotaExceeded, items: [y]))
        #expect(machine.receive(refused) == [F.pull(a, 1, after: 0)])
        #expect(machine.state.records[x]?.refusal == nil)
    }

    /// Decision 0224: a batch holds at most `maximumBatchContentBytes` of content, but at least
    /// one version, so that its request stays under the server's body limit.
    @Test func aBatchStaysWithinItsContentBudgetAndTakesAtLeastOneVersion() {
        let z = ItemID("z")
        var machine = ZoneSyncMachine(device: a, zone: .keychain, configuration: .init(maximumBatchContentBytes: 2))
        let (vx, vy, vz) = (F.write(1, by: a, [a: 1], at: 1_000), F.write(2, by: a, [a: 2], at: 1_000), F.write(3, by: a, [a: 3], at: 1_000))
        for (item, content) in [(x, UInt8(1)), (y, 2), (z, 3)] { _ = machine.localChange(F.change(item, content, at: 1_000)) }
        #expect(machine.startSync() == [F.push(a, batch: 1, cursor: 0, [(x, vx), (y, vy)])])
        #expect(machine.receive(F.committed(1, [(x, .applied), (y, .applied)])) == [F.pull(a, 1, after: 0)])
        #expect(machine.receive(F.page(1, [], next: 2)) == [F.push(a, batch: 2, cursor: 2, [(z, vz)])])

        var tight = ZoneSyncMachine(device: a, zone: .keychain, configuration: .init(maximumBatchContentBytes: 0))
        _ = tight.localChange(F.change(x, 1, at: 1_000))
        _ = tight.localChange(F.change(y, 2, at: 1_000))
        #expect(tight.startSync() == [F.push(a, batch: 1, cursor: 0, [(x, vx)])])
    }

    /// Decision 0224: a batch the server refuses as too large without naming an item (its request
    /// limit is below the client's budget) stored nothing: it is dropped and its versions pushed
    /// again in batches of half its size; a single version refused so is set aside.
    @Test func aBatchRefusedAsTooLargeIsSplitAndALoneVersionIsSetAside() {
        let (w, z) = (ItemID("w"), ItemID("z"))
        var machine = ZoneSyncMachine(device: a, zone: .keychain, configuration: .init(maximumPushesPerRound: 8))
        let versions = [w, x, y, z].enumerated().map { index, item in (item, F.write(UInt8(index + 1), by: a, [a: UInt64(index + 1)], at: 1_000)) }
        for (index, item) in [w, x, y, z].enumerated() { _ = machine.localChange(F.change(item, UInt8(index + 1), at: 1_000)) }
        let tooLarge = { (batch: UInt64) in PushResponse(batchID: batch, status: .tooLarge, results: []) }
        #expect(machine.startSync() == [F.push(a, batch: 1, cursor: 0, versions)])
        #expect(machine.receive(tooLarge(1)) == [F.push(a, batch: 2, cursor: 0, Array(versions[0..<2]))])
        #expect(machine.receive(tooLarge(2)) == [F.push(a, batch: 3, cursor: 0, [versions[0]])])
        #expect(machine.receive(tooLarge(3)) == [F.push(a, batch: 4, cursor: 0, [versions[1]])])
        #expect(machine.state.records[w]?.refusal == .tooLarge)
        #expect(machine.receive(F.committed(4, [(x, .applied)])) == [F.pull(a, 1, after: 0)])
        #expect(machine.receive(F.page(1, [], next: 1)) == [F.push(a, batch: 5, cursor: 1, [versions[2]])])
        #expect(machine.state.unansweredBatch?.batchID == 5)
    }
}

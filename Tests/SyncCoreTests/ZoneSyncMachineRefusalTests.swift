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
}

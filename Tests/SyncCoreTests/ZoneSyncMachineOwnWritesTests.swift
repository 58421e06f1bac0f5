import SyncCore
import Testing

/// A committed answer that shows the feed after the cursor is exactly the batch, each version
/// stored alone, is read as the feed: the next batch goes without pulling the device's own
/// versions back (rule R25a); the round still ends with a pull.
@Suite("Client sync machine: its own writes are not pulled back")
struct ZoneSyncMachineOwnWritesTests {
    typealias F = Fixtures
    let a = Fixtures.a
    let x = ItemID("x"), y = ItemID("y")

    func twoPending() -> (ZoneSyncMachine, ItemVersion, ItemVersion) {
        var state = ZoneSyncState(device: a, zone: .keychain)
        state.cursor = 10
        state.latestSequence = 10
        var machine = ZoneSyncMachine(restoring: state, configuration: .init(maximumBatchSize: 1))
        _ = machine.localChange(F.change(x, 1, at: 1_000))
        _ = machine.localChange(F.change(y, 2, at: 1_001))
        return (machine, F.write(1, by: a, [a: 1], at: 1_000), F.write(2, by: a, [a: 2], at: 1_001))
    }

    @Test func aBatchThatIsTheWholeFeedIsNotPulledBack() {
        var (machine, first, second) = twoPending()
        #expect(machine.startSync() == [F.push(a, batch: 1, cursor: 10, [(x, first)])])
        let answer = PushResponse(batchID: 1, status: .committed, results: [.init(item: x, outcome: .applied, sequence: 11)], latestSequence: 11)
        #expect(machine.receive(answer) == [F.push(a, batch: 2, cursor: 11, [(y, second)])])
        #expect(machine.state.cursor == 11)
        let last = PushResponse(batchID: 2, status: .committed, results: [.init(item: y, outcome: .applied, sequence: 12)], latestSequence: 12)
        #expect(machine.receive(last) == [F.pull(a, 1, after: 12)])
    }

    @Test(arguments: [
        // Another device wrote in between: the feed holds more than the batch.
        (ServerMerge.Outcome.applied, UInt64(12), UInt64(12)),
        // Stored beside a sibling, or stale: the server holds versions the device has not read.
        (.conflictKept, 11, 11),
        (.stale, 0, 10),
    ])
    func anythingElseIsPulled(outcome: ServerMerge.Outcome, sequence: UInt64, latest: UInt64) {
        var (machine, first, _) = twoPending()
        #expect(machine.startSync() == [F.push(a, batch: 1, cursor: 10, [(x, first)])])
        let answer = PushResponse(
            batchID: 1, status: .committed, results: [.init(item: x, outcome: outcome, sequence: sequence == 0 ? nil : sequence)],
            latestSequence: latest)
        #expect(machine.receive(answer) == [F.pull(a, 1, after: 10)])
        #expect(machine.state.cursor == 10)
    }
}

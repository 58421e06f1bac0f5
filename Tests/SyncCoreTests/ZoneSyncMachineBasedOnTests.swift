import SyncCore
import Testing

/// Transcripts of a local change the store made over a version the committed state never learnt
/// (a crash between the keychain commit and the state commit, B4, decision 0107).
@Suite("Client sync machine: local changes over the store's version")
struct ZoneSyncMachineBasedOnTests {
    typealias F = Fixtures
    let a = Fixtures.a, b = Fixtures.b
    let x = ItemID("x")

    /// The state knows b's v1 of x; the store took b's v2 before the crash.
    func machineAtV1() -> ZoneSyncMachine {
        var machine = ZoneSyncMachine(device: a, zone: .keychain)
        _ = machine.startSync()
        _ = machine.receive(F.page(1, [(x, 1, [F.write(1, by: b, [b: 1], at: 1_000)])], next: 1))
        return machine
    }

    @Test func aDeletionOverTheStoresVersionDominatesItAndIsPushed() {
        var machine = machineAtV1()
        var deletion = F.change(x, nil, at: 3_000)
        deletion.basedOn = VersionVector([b: 2])
        _ = machine.localChange(deletion)
        let tombstone = F.write(nil, by: a, [a: 1, b: 2], at: 3_000, overwritten: [b: 2])
        #expect(machine.state.records[x]?.version == tombstone)
        // The replayed page brings v2 again: the deletion descends from it, so it is pushed as is.
        #expect(machine.startSync() == [F.push(a, batch: 1, cursor: 1, [(x, tombstone)])])
    }

    @Test func aDeletionOfAnItemTheStateNeverHeldIsNotDropped() {
        var machine = ZoneSyncMachine(device: a, zone: .keychain)
        var deletion = F.change(x, nil, at: 3_000)
        #expect(machine.localChange(deletion) == [])
        #expect(machine.state.records[x] == nil)
        deletion.basedOn = VersionVector([b: 1])
        _ = machine.localChange(deletion)
        #expect(machine.state.records[x]?.version == F.write(nil, by: a, [a: 1, b: 1], at: 3_000, overwritten: [b: 1]))
        #expect(machine.hasPendingChanges)
    }

    @Test func aCounterOfThisDeviceTheStateNeverCommittedIsNotReused() {
        var machine = machineAtV1()
        var change = F.change(x, 7, at: 3_000)
        change.basedOn = VersionVector([a: 4, b: 2])
        _ = machine.localChange(change)
        #expect(machine.state.writeCounter == 5)
        #expect(machine.state.records[x]?.version.vector == VersionVector([a: 5, b: 2]))
    }
}

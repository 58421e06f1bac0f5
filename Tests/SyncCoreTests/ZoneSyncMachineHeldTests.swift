import SyncCore
import Testing

/// Decision 0137: items the driver held (its local store could not apply them) reach the machine
/// without versions while held, and with them at the release, merged as if they arrived then.
@Suite("Client sync machine: held arrivals")
struct ZoneSyncMachineHeldTests {
    typealias F = Fixtures
    let a = Fixtures.a, b = Fixtures.b
    let x = ItemID("x"), y = ItemID("y")

    @Test func aHeldItemChangesNothingUntilItIsReleased() {
        var machine = ZoneSyncMachine(device: b, zone: .keychain)
        let v1 = F.write(1, by: a, [a: 1], at: 1_000)
        let other = F.write(2, by: a, [a: 2], at: 1_500)
        #expect(machine.startSync() == [F.pull(b, 1, after: 0)])
        #expect(machine.receive(F.page(1, [(x, 1, []), (y, 2, [other])], next: 2)) == [.store(y, other), .synced])
        #expect(machine.state.cursor == 2 && machine.state.records[x] == nil)
        #expect(machine.receiveHeld([ChangedItem(item: x, sequence: 1, versions: [v1])]) == [.store(x, v1)])
        #expect(machine.state.records[x]?.version == v1 && !machine.hasPendingChanges)
    }

    @Test func aReleasedItemMeetsALocalChangeMadeWhileItWasHeld() {
        var machine = ZoneSyncMachine(device: a, zone: .keychain)
        let v1 = F.write(1, by: a, [a: 1], at: 1_000)
        _ = machine.localChange(F.change(x, 1, at: 1_000))
        #expect(machine.startSync() == [F.push(a, batch: 1, cursor: 0, [(x, v1)])])
        #expect(machine.receive(F.committed(1, [(x, .applied)])) == [F.pull(a, 1, after: 0)])
        #expect(machine.receive(F.page(1, [(x, 1, [v1])], next: 1)) == [.synced])
        // B's update arrives and is held; meanwhile A writes the item, earlier than B did.
        let theirs = F.write(3, by: b, [a: 1, b: 1], at: 5_000, overwritten: [a: 1])
        #expect(machine.startSync() == [F.pull(a, 2, after: 1)])
        #expect(machine.receive(F.page(2, [(x, 2, [])], next: 2)) == [.synced])
        let mine = F.write(2, by: a, [a: 2], at: 3_000, overwritten: [a: 1])
        _ = machine.localChange(F.change(x, 2, at: 3_000))
        // Released: the later write wins, the local one goes to history, the resolution is pushed.
        var resolved = theirs.with(vector: VersionVector([a: 3, b: 1]))
        resolved.overwritten = v1.vector
        #expect(machine.receiveHeld([ChangedItem(item: x, sequence: 2, versions: [theirs])]) == [
            .keepInHistory(x, mine), .store(x, resolved),
        ])
        #expect(machine.startSync() == [F.push(a, batch: 2, cursor: 2, [(x, resolved)])])
    }

    @Test func nothingIsReleasedWhileARoundRuns() {
        var machine = ZoneSyncMachine(device: b, zone: .keychain)
        #expect(machine.startSync() == [F.pull(b, 1, after: 0)])
        #expect(machine.receiveHeld([ChangedItem(item: x, sequence: 1, versions: [F.write(1, by: a, [a: 1], at: 1_000)])]) == [])
        #expect(machine.state.records.isEmpty)
    }
}

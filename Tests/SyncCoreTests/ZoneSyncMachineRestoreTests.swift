import SyncCore
import Testing

/// A server restored from a backup (decision 0154): the device gives back, unchanged, every
/// version and deletion the server acknowledged or sent and no longer lists; any other resync
/// keeps them and reports them (decision 0106).
@Suite("Client sync machine after a server's restore")
struct ZoneSyncMachineRestoreTests {
    typealias F = Fixtures
    let a = Fixtures.a, b = Fixtures.b
    let x = ItemID("x"), y = ItemID("y"), z = ItemID("z")

    /// Device A holding x (its own write), y (B's) and z's deletion (B's), in step at cursor 4.
    func holdingThree() -> (ZoneSyncMachine, ItemVersion, ItemVersion, ItemVersion) {
        var machine = ZoneSyncMachine(device: a, zone: .keychain)
        let mine = F.write(1, by: a, [a: 1], at: 1_000)
        _ = machine.localChange(F.change(x, 1, at: 1_000))
        _ = machine.startSync()
        _ = machine.receive(F.committed(1, [(x, .applied)]))
        #expect(machine.receive(F.page(1, [(x, 1, [mine])], next: 1)) == [.synced])
        let theirs = F.write(5, by: b, [b: 1], at: 2_000)
        let zValue = F.write(7, by: b, [b: 2], at: 2_100)
        let zDeleted = F.write(nil, by: b, [b: 3], at: 2_200, overwritten: [b: 2])
        #expect(machine.startSync() == [F.pull(a, 2, after: 1)])
        _ = machine.receive(F.page(2, [(y, 2, [theirs]), (z, 3, [zValue])], next: 3))
        #expect(machine.startSync() == [F.pull(a, 3, after: 3)])
        _ = machine.receive(F.page(3, [(z, 4, [zDeleted])], next: 4))
        #expect(machine.state.records[z]?.version.isDeleted == true)
        #expect(!machine.hasPendingChanges)
        return (machine, mine, theirs, zDeleted)
    }

    @Test func whatARestoredServerLostIsGivenBackUnchanged() {
        var (machine, mine, theirs, zDeleted) = holdingThree()
        #expect(machine.startSync() == [F.pull(a, 4, after: 4)])
        #expect(machine.receive(.feedRestored(requestID: RequestID(epoch: 1, number: 4))) == [F.pull(a, 5, after: 0, full: true)])
        // The restored server lists none of the three: all three go back as they were.
        let jumped: UInt64 = 1 << 40
        #expect(machine.receive(F.page(5, [], next: jumped)) == [F.push(a, batch: 2, cursor: jumped, [(x, mine), (y, theirs), (z, zDeleted)])])
        #expect(machine.receive(F.committed(2, [(x, .applied), (y, .applied), (z, .applied)])) == [F.pull(a, 6, after: jumped)])
        #expect(machine.receive(F.page(6, [(x, jumped + 1, [mine]), (y, jumped + 1, [theirs]), (z, jumped + 1, [zDeleted])], next: jumped + 1)) == [.synced])
        #expect(!machine.hasPendingChanges)
    }

    /// A value given back that the restored server refuses for the account's quota stays to be
    /// pushed: a later resync after a collection does not take its old baseline for a sign that the
    /// server had it and a deletion of it was collected (simulation with restores, seed 6: two
    /// devices kept a value the third never had, and none pushed it again).
    @Test func whatARestoredServerRefusedForItsQuotaIsStillGivenBackLater() throws {
        var (machine, mine, theirs, zDeleted) = holdingThree()
        _ = machine.startSync()
        _ = machine.receive(.feedRestored(requestID: RequestID(epoch: 1, number: 4)))
        let jumped: UInt64 = 1 << 40
        #expect(machine.receive(F.page(5, [], next: jumped)) == [F.push(a, batch: 2, cursor: jumped, [(x, mine), (y, theirs), (z, zDeleted)])])
        let overQuota = PushResponse(batchID: 2, status: .refused, results: [], refused: .init(reason: .quotaExceeded, items: [x]))
        #expect(machine.receive(overQuota) == [F.push(a, batch: 3, cursor: jumped, [(y, theirs), (z, zDeleted)])])
        #expect(machine.receive(F.committed(3, [(y, .applied), (z, .applied)])) == [F.pull(a, 6, after: jumped)])
        let listed = [(y, jumped + 1, [theirs]), (z, jumped + 1, [zDeleted])]
        #expect(machine.receive(F.page(6, listed, next: jumped + 1)) == [.synced])
        #expect(machine.startSync() == [F.pull(a, 7, after: jumped + 1)])
        #expect(machine.receive(.cursorExpired(requestID: RequestID(epoch: 1, number: 7))) == [F.pull(a, 8, after: 0, full: true)])
        // Collected after x was written: had the server held x, a deletion of it might be gone.
        _ = machine.receive(F.page(8, listed, next: jumped + 1, collectedAt: 5_000))
        let record = try #require(machine.state.records[x])
        #expect(record.isPending && record.refusal == .quotaExceeded && record.version == mine)
    }

    /// A newer version the local store took before the device died between its two commits (R56),
    /// which the restore lost: the restored server's older version is refused as a rollback, not
    /// applied over it, until a device gives the newer one back (`sync-simulate --restores` seed
    /// 742: the older value came back on the device over the newer one).
    @Test func anOlderVersionThanTheStoreTookIsRefusedAfterARestore() {
        var (machine, _, theirs, _) = holdingThree()
        let newer = F.write(6, by: b, [b: 4], at: 2_500, overwritten: [b: 1])
        machine.markLocalValueUnknown([y], applied: [y: [newer.vector]])
        _ = machine.startSync()
        _ = machine.receive(.feedRestored(requestID: RequestID(epoch: 1, number: 4)))
        let actions = machine.receive(F.page(5, [(y, 2, [theirs])], next: 1 << 40))
        #expect(actions.contains(.reject(y, .vectorWentBackwards)))
        #expect(!actions.contains(.store(y, theirs)))
    }

    @Test func whatTheRestoredServerStillListsIsNotPushedAgain() {
        var (machine, mine, theirs, _) = holdingThree()
        _ = machine.startSync()
        _ = machine.receive(.feedRestored(requestID: RequestID(epoch: 1, number: 4)))
        // The backup had x and y; only z's deletion was lost.
        let listed = F.page(5, [(x, 1, [mine]), (y, 2, [theirs])], next: 1 << 40)
        guard case .push(let batch)? = machine.receive(listed).first else {
            Issue.record("the lost deletion is not pushed")
            return
        }
        #expect(batch.items.map(\.item) == [z])
    }

    @Test func anExpiredCursorStillKeepsAndReportsWithoutPushing() {
        var (machine, _, _, _) = holdingThree()
        _ = machine.startSync()
        #expect(machine.receive(.cursorExpired(requestID: RequestID(epoch: 1, number: 4))) == [F.pull(a, 5, after: 0, full: true)])
        // The server collected deletions after every value was written: their deletions may be gone.
        #expect(machine.receive(F.page(5, [], next: 90, collectedAt: 5_000)) == [.unlisted(x), .unlisted(y), .synced])
        #expect(!machine.hasPendingChanges)
    }

    /// Decision 0248: a server that collected nothing since the values were written cannot have
    /// removed their deletions, so it lost them, though it does not say so: they are given back
    /// (and reported).
    @Test func whatOnlyALossExplainsIsGivenBackUnannounced() {
        var (machine, mine, theirs, zDeleted) = holdingThree()
        _ = machine.startSync()
        #expect(machine.receive(.cursorExpired(requestID: RequestID(epoch: 1, number: 4))) == [F.pull(a, 5, after: 0, full: true)])
        // The last collection (more than the clock window of 0108) before any of them was written.
        #expect(machine.receive(F.page(5, [], next: 90, collectedAt: -100_000)) == [
            .unlisted(x), .unlisted(y), F.push(a, batch: 2, cursor: 90, [(x, mine), (y, theirs), (z, zDeleted)]),
        ])
        // The server answers it held them: it hides them rather than lost them. The next resync
        // keeps and reports them, and gives nothing back again.
        #expect(machine.receive(F.committed(2, [(x, .stale), (y, .stale), (z, .stale)])) == [F.pull(a, 6, after: 90)])
        #expect(machine.receive(F.page(6, [], next: 90)) == [.synced])
        #expect(machine.startSync(resyncing: true) == [F.pull(a, 7, after: 0, full: true)])
        #expect(machine.receive(F.page(7, [], next: 90, collectedAt: -100_000)) == [.unlisted(x), .unlisted(y), .synced])
    }

    /// Decision 0248: a device that found its own latest statement gone resyncs giving back, as
    /// after an announced restore, whatever the server collected.
    @Test func aResyncGivingBackPushesWhatTheServerNoLongerLists() {
        var (machine, mine, theirs, zDeleted) = holdingThree()
        #expect(machine.startSync(resyncing: true, givingBack: true) == [F.pull(a, 4, after: 0, full: true)])
        guard case .push(let batch)? = machine.receive(F.page(4, [], next: 90, collectedAt: 5_000)).last else {
            Issue.record("nothing given back")
            return
        }
        #expect(batch.items.map(\.version) == [mine, theirs, zDeleted])
    }
}

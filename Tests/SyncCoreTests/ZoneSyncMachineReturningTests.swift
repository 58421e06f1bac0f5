import SyncCore
import Testing

/// Transcripts of a device that returns without its sync state (a re-enrolment, a lost state
/// file), found by the simulation of the shipped driver on seeds 1–2,000 (decisions 0194, 0196).
@Suite("Client sync machine: returning without sync state")
struct ZoneSyncMachineReturningTests {
    typealias F = Fixtures
    let a = Fixtures.a, b = Fixtures.b, c = Fixtures.c
    let x = ItemID("x")

    /// A machine without state, of a store that synced before, that took `change` from the store.
    func returning(with change: LocalChange) -> ZoneSyncMachine {
        var machine = ZoneSyncMachine(device: a, zone: .keychain)
        machine.localStore.returnsWithoutState = true
        _ = machine.localChange(change)
        return machine
    }

    /// The last page of a full resync, with the time of the server's last collection.
    func lastPage(_ number: UInt64, _ items: [(ItemID, UInt64, [ItemVersion])], next: UInt64, collectedAt: Int64? = nil) -> PullResponse<ItemVersion> {
        .changes(
            requestID: RequestID(epoch: 1, number: number), items: items.map { ChangedItem(item: $0.0, sequence: $0.1, versions: $0.2) },
            nextCursor: next, hasMore: false, deletionsCollectedAt: collectedAt)
    }

    /// Seed 1429: a copy an earlier enrolment took, kept because the resync no longer listed it,
    /// stays known as held, so a deletion the server lists later removes it (0194).
    @Test func aCopyKeptWhenUnlistedIsRemovedByADeletionListedLater() {
        var machine = ZoneSyncMachine(device: a, zone: .keychain)
        machine.markLocalValueUnknown([x])
        #expect(machine.startSync() == [F.pull(a, 1, after: 0)])
        #expect(machine.receive(.cursorExpired(requestID: RequestID(epoch: 1, number: 1))) == [F.pull(a, 2, after: 0, full: true)])
        #expect(machine.receive(F.page(2, [], next: 5)) == [.unlisted(x), .synced])
        #expect(machine.state.records[x] == nil)
        // Another device deletes the item again (it wrote it anew over an old copy, say).
        #expect(machine.startSync() == [F.pull(a, 3, after: 5)])
        let deletion = F.write(nil, by: b, [b: 3], at: 9_000, overwritten: [b: 2])
        #expect(machine.receive(F.page(3, [(x, 7, [deletion])], next: 7)) == [.remove(x), .synced])
    }

    /// Malicious seed 101 (decision 0236): a device back without its state is served, in the full
    /// resync, a version older than one its (key-value) store took from the server before:
    /// refused as a rollback; the version it took, or a later one, is taken.
    @Test func aVersionOlderThanTheOneTheStoreTookIsRefused() {
        let took = F.write(2, by: b, [b: 2], at: 2_000, overwritten: [b: 1])
        let older = F.write(1, by: b, [b: 1], at: 1_000)
        var machine = ZoneSyncMachine(device: a, zone: .keychain)
        machine.localStore.returnsWithoutState = true
        machine.markLocalValueUnknown([x], applied: [x: [took.vector]])
        #expect(machine.startSync() == [F.pull(a, 1, after: 0)])
        #expect(machine.receive(.cursorExpired(requestID: RequestID(epoch: 1, number: 1))) == [F.pull(a, 2, after: 0, full: true)])
        #expect(machine.receive(lastPage(2, [(x, 3, [older])], next: 3)) == [.reject(x, .vectorWentBackwards), .synced])
        #expect(machine.state.records[x] == nil)
        #expect(machine.startSync(resyncing: true) == [F.pull(a, 3, after: 0, full: true)])
        #expect(machine.receive(lastPage(3, [(x, 4, [took])], next: 4)) == [.store(x, took), .synced])
    }

    /// Seed 1170: an edit of a version the store had applied, made before the last collection,
    /// of an item the server no longer lists, may be the value another device deleted (its push
    /// answered after the state was lost): kept and reported, not pushed (0196).
    @Test func anOldEditOfAnUnlistedItemIsKeptNotPushed() {
        var edit = F.change(x, 7, at: 1_000)
        edit.basedOn = VersionVector([b: 1])
        var machine = returning(with: edit)
        #expect(machine.startSync(reconcilingFirst: true) == [F.pull(a, 1, after: 0, full: true)])
        #expect(machine.receive(lastPage(1, [], next: 9, collectedAt: 5_000)) == [.unlisted(x), .synced])
        #expect(machine.state.records[x]?.isPending == false)
    }

    /// The same edit of an item the server still lists, at the version the store had applied: an
    /// edit of that version, not a copy of unknown age, so it competes and is pushed (0196; R48's
    /// "vector names only this device"). The simulation's ranges pass without that clause (tried
    /// on 2026-11-28); only this transcript shows the edit put in history and the older listed
    /// value taken in its place.
    @Test func anOldEditOfAListedItemIsPushed() throws {
        var edit = F.change(x, 7, at: 1_000)
        edit.basedOn = VersionVector([b: 1])
        var machine = returning(with: edit)
        #expect(machine.startSync(reconcilingFirst: true) == [F.pull(a, 1, after: 0, full: true)])
        let pending = try #require(machine.state.records[x]?.version)
        let listed = F.write(5, by: b, [b: 1], at: 900)
        #expect(machine.receive(lastPage(1, [(x, 4, [listed])], next: 9, collectedAt: 5_000)) == [F.push(a, batch: 1, cursor: 9, [(x, pending)])])
    }

    /// A copy with the value of a version the server lists (R48's sameAsServer): the server's
    /// version stands as it is; nothing goes to history or out.
    @Test func aCopyWithTheListedValueTakesTheServersVersion() {
        var machine = returning(with: F.change(x, 5, at: 1_000))
        #expect(machine.startSync(reconcilingFirst: true) == [F.pull(a, 1, after: 0, full: true)])
        let listed = F.write(5, by: b, [b: 1], at: 900)
        let actions = machine.receive(lastPage(1, [(x, 4, [listed])], next: 9))
        #expect(!actions.contains { if case .push = $0 { true } else if case .keepInHistory = $0 { true } else { false } })
        #expect(machine.state.records[x]?.version == listed)
        #expect(machine.state.records[x]?.isPending == false)
    }

    /// The same edit made after the collection (beyond the clock window) is a write of its own.
    @Test func aLaterEditOfAnUnlistedItemIsPushed() throws {
        var edit = F.change(x, 7, at: 5_000 + ModificationTimeBound.window + 1)
        edit.basedOn = VersionVector([b: 1])
        var machine = returning(with: edit)
        #expect(machine.startSync(reconcilingFirst: true) == [F.pull(a, 1, after: 0, full: true)])
        let pending = try #require(machine.state.records[x]?.version)
        #expect(machine.receive(lastPage(1, [], next: 9, collectedAt: 5_000)) == [F.push(a, batch: 1, cursor: 9, [(x, pending)])])
    }

    /// A copy taken again as the version an earlier enrolment pushed (0247, 0253) carries that
    /// version's vector: a deletion listed later that does not descend from it was made without
    /// seeing it, and the value wins as any concurrent value wins over a deletion (R39), where its
    /// time alone (R48 `olderThanDeletion`) put it in history (`sync-simulate --restores` seed 292:
    /// an acknowledged key-value write, lost by the restored server, was removed on its only holder,
    /// back without its state).
    @Test func aCopyTakenAsItsSentVersionBeatsALaterConcurrentDeletion() throws {
        var change = F.change(x, 16, at: 1_000)
        change.sentBefore = F.write(16, by: c, [b: 2, c: 4], at: 1_000)
        var machine = returning(with: change)
        #expect(machine.startSync(reconcilingFirst: true) == [F.pull(a, 1, after: 0, full: true)])
        let deletion = F.write(nil, by: b, [b: 3], at: 2_000, overwritten: [b: 2])
        let actions = machine.receive(lastPage(1, [(x, 4, [deletion])], next: 9))
        let record = try #require(machine.state.records[x])
        #expect(!record.version.isDeleted && record.version.content == [16] && record.isPending)
        #expect(record.version.vector.descends(from: deletion.vector))
        #expect(actions.contains { if case .push = $0 { true } else { false } })
        #expect(!actions.contains { if case .keepInHistory = $0 { true } else { false } })
    }

    /// Seed 1498: a deletion replayed from the journal, built over an older tag than the value the
    /// device showed (its own write, whose push's answer was lost with the state), made after
    /// every value the server has: it wins as the later write it is; the value goes to history.
    @Test func aDeletionReplayedWithoutStateBeatsAnOlderValue() throws {
        var deletion = F.change(x, nil, at: 3_000)
        deletion.basedOn = VersionVector([b: 1])
        var machine = returning(with: deletion)
        #expect(machine.startSync(reconcilingFirst: true) == [F.pull(a, 1, after: 0, full: true)])
        let older = F.write(5, by: c, [b: 1, c: 1], at: 2_000, overwritten: [b: 1])
        let actions = machine.receive(F.page(1, [(x, 4, [older])], next: 4))
        let record = try #require(machine.state.records[x])
        #expect(record.version.isDeleted && record.isPending)
        #expect(record.version.vector.compare(to: older.vector) == .dominates)
        #expect(actions == [.keepInHistory(x, older), F.push(a, batch: 1, cursor: 4, [(x, record.version)])])
    }

    /// A value written after the deletion still beats it.
    @Test func aLaterValueBeatsADeletionReplayedWithoutState() {
        var deletion = F.change(x, nil, at: 3_000)
        deletion.basedOn = VersionVector([b: 1])
        var machine = returning(with: deletion)
        _ = machine.startSync(reconcilingFirst: true)
        let later = F.write(5, by: c, [b: 1, c: 1], at: 4_000, overwritten: [b: 1])
        _ = machine.receive(F.page(1, [(x, 4, [later])], next: 4))
        #expect(machine.state.records[x]?.version.isDeleted == false)
        #expect(machine.state.records[x]?.version.content == [5])
    }
}

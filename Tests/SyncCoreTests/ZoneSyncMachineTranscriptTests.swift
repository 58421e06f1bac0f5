import SyncCore
import Testing

/// Transcripts of the client state machine: each event and the exact actions it must return.
@Suite("Client sync machine transcripts")
struct ZoneSyncMachineTranscriptTests {
    typealias F = Fixtures
    let a = Fixtures.a, b = Fixtures.b, c = Fixtures.c
    let x = ItemID("x"), y = ItemID("y"), z = ItemID("z"), w = ItemID("w"), q = ItemID("q")

    /// Device A after writing `x` (content 1 at t=1000) and a first round: synced at cursor 1.
    func syncedWithX() -> (ZoneSyncMachine, ItemVersion) {
        var machine = ZoneSyncMachine(device: a, zone: .keychain)
        let v1 = F.write(1, by: a, [a: 1], at: 1_000)
        #expect(machine.localChange(F.change(x, 1, at: 1_000)) == [])
        #expect(machine.startSync() == [F.push(a, batch: 1, cursor: 0, [(x, v1)])])
        #expect(machine.receive(F.committed(1, [(x, .applied)])) == [F.pull(a, 1, after: 0)])
        #expect(machine.receive(F.page(1, [(x, 1, [v1])], next: 1)) == [.synced])
        return (machine, v1)
    }

    /// R23a: a batch the server stored alone at the sequences right after the cursor, with nothing
    /// later, is not pulled back while more is to be pushed; the round's last batch still is, and
    /// any other answer (a sibling kept, a gap, a later sequence) is pulled back at once.
    @Test func anOwnBatchRightAfterTheCursorIsNotPulledBackBetweenBatches() {
        var machine = ZoneSyncMachine(device: a, zone: .keychain, configuration: .init(maximumBatchSize: 1))
        let vx = F.write(1, by: a, [a: 1], at: 1_000), vy = F.write(2, by: a, [a: 2], at: 1_000), vz = F.write(3, by: a, [a: 3], at: 1_000)
        for (item, content) in [(x, UInt8(1)), (y, 2), (z, 3)] { _ = machine.localChange(F.change(item, content, at: 1_000)) }
        #expect(machine.startSync() == [F.push(a, batch: 1, cursor: 0, [(x, vx)])])
        let first = PushResponse(batchID: 1, status: .committed, results: [.init(item: x, outcome: .applied, sequence: 1)], latestSequence: 1)
        #expect(machine.receive(first) == [F.push(a, batch: 2, cursor: 1, [(y, vy)])])
        #expect(machine.state.cursor == 1)
        // Another device wrote in between: the answer's latest sequence is past this batch.
        let second = PushResponse(batchID: 2, status: .committed, results: [.init(item: y, outcome: .applied, sequence: 3)], latestSequence: 3)
        #expect(machine.receive(second) == [F.pull(a, 1, after: 1, told: 3)])
        #expect(machine.receive(F.page(1, [(w, 2, [F.write(4, by: b, [b: 1], at: 900)]), (y, 3, [vy])], next: 3)).contains(.push(
            PushBatch(device: a, zone: .keychain, batchID: 3, cursor: 3, items: [PushedItem(item: z, version: vz)]))))
        // The round's last batch is pulled back.
        let third = PushResponse(batchID: 3, status: .committed, results: [.init(item: z, outcome: .applied, sequence: 4)], latestSequence: 4)
        #expect(machine.receive(third) == [F.pull(a, 2, after: 3, told: 4)])
        #expect(machine.receive(F.page(2, [(z, 4, [vz])], next: 4)) == [.synced])
        #expect(machine.state.cursor == 4)
    }

    @Test func updateVersusUpdateLaterTimeWinsAndTheLoserGoesToHistory() {
        var (machine, v1) = syncedWithX()
        let mine = F.write(2, by: a, [a: 2], at: 3_000, overwritten: [a: 1])
        let theirs = F.write(3, by: b, [a: 1, b: 1], at: 5_000, overwritten: [a: 1])
        #expect(machine.localChange(F.change(x, 2, at: 3_000)) == [])
        #expect(machine.startSync() == [F.push(a, batch: 2, cursor: 1, [(x, mine)])])
        #expect(machine.receive(F.committed(2, [(x, .conflictKept)])) == [F.pull(a, 2, after: 1)])
        var resolved = theirs.with(vector: VersionVector([a: 3, b: 1]))
        resolved.overwritten = v1.vector
        #expect(machine.receive(F.page(2, [(x, 3, [theirs, mine])], next: 3)) == [
            .keepInHistory(x, mine), .store(x, resolved), F.push(a, batch: 3, cursor: 3, [(x, resolved)]),
        ])
        #expect(resolved.vector.compare(to: mine.vector) == .dominates && resolved.vector.compare(to: theirs.vector) == .dominates)
        // B resolved the same siblings at the same time: same value, concurrent vector. The next
        // round sees both and settles without another write.
        var resolvedByB = theirs.with(vector: VersionVector([a: 2, b: 2]))
        resolvedByB.overwritten = v1.vector
        #expect(machine.receive(F.committed(3, [(x, .conflictKept)])) == [F.pull(a, 3, after: 3)])
        #expect(machine.receive(F.page(3, [(x, 5, [resolvedByB, resolved])], next: 5)) == [.synced])
        #expect(!machine.hasPendingChanges)
    }

    @Test func updateBeatsAConcurrentDelete() {
        var (machine, v1) = syncedWithX()
        let update = F.write(2, by: a, [a: 2], at: 3_000, overwritten: [a: 1])
        let deletion = F.write(nil, by: b, [a: 1, b: 1], at: 9_000, overwritten: [a: 1])
        _ = machine.localChange(F.change(x, 2, at: 3_000))
        #expect(machine.startSync() == [F.push(a, batch: 2, cursor: 1, [(x, update)])])
        #expect(machine.receive(F.committed(2, [(x, .conflictKept)])) == [F.pull(a, 2, after: 1)])
        var resolved = update.with(vector: VersionVector([a: 3, b: 1]))
        resolved.overwritten = v1.vector
        // The local copy already shows the update: nothing to store, nothing for history.
        #expect(machine.receive(F.page(2, [(x, 3, [deletion, update])], next: 3)) == [F.push(a, batch: 3, cursor: 3, [(x, resolved)])])
    }

    @Test func theDeletingDeviceGetsTheConcurrentUpdateBack() {
        var machine = ZoneSyncMachine(device: b, zone: .keychain)
        let v1 = F.write(1, by: a, [a: 1], at: 1_000)
        let update = F.write(2, by: a, [a: 2], at: 3_000, overwritten: [a: 1])
        #expect(machine.startSync() == [F.pull(b, 1, after: 0)])
        #expect(machine.receive(F.page(1, [(x, 1, [v1])], next: 1)) == [.store(x, v1), .synced])
        _ = machine.localChange(F.change(x, nil, at: 9_000))
        let deletion = F.write(nil, by: b, [a: 1, b: 1], at: 9_000, overwritten: [a: 1])
        #expect(machine.startSync() == [F.push(b, batch: 1, cursor: 1, [(x, deletion)])])
        #expect(machine.receive(F.committed(1, [(x, .conflictKept)])) == [F.pull(b, 2, after: 1)])
        var resolved = update.with(vector: VersionVector([a: 2, b: 2]))
        resolved.overwritten = v1.vector
        #expect(machine.receive(F.page(2, [(x, 3, [update, deletion])], next: 3)) == [
            .store(x, resolved), F.push(b, batch: 2, cursor: 3, [(x, resolved)]),
        ])
    }

    @Test func deleteVersusDeleteStaysDeletedWithOneTombstone() {
        var (machine, _) = syncedWithX()
        let mine = F.write(nil, by: a, [a: 2], at: 3_000, overwritten: [a: 1])
        let theirs = F.write(nil, by: b, [a: 1, b: 1], at: 4_000, overwritten: [a: 1])
        _ = machine.localChange(F.change(x, nil, at: 3_000))
        #expect(machine.startSync() == [F.push(a, batch: 2, cursor: 1, [(x, mine)])])
        #expect(machine.receive(F.committed(2, [(x, .conflictKept)])) == [F.pull(a, 2, after: 1)])
        var tombstone = theirs.with(vector: VersionVector([a: 3, b: 1]))
        tombstone.overwritten = VersionVector([a: 1])
        #expect(machine.receive(F.page(2, [(x, 3, [mine, theirs])], next: 3)) == [F.push(a, batch: 3, cursor: 3, [(x, tombstone)])])
        #expect(machine.receive(F.committed(3, [(x, .applied)])) == [F.pull(a, 3, after: 3)])
        #expect(machine.receive(F.page(3, [(x, 4, [tombstone])], next: 4)) == [.synced])
    }

    @Test func theSameItemCreatedOnTwoDevicesBecomesOneItem() {
        var machine = ZoneSyncMachine(device: a, zone: .keychain)
        let mine = F.write(1, by: a, [a: 1], at: 1_000)
        let theirs = F.write(2, by: b, [b: 1], at: 1_000)  // same time: the greater device ID wins
        _ = machine.localChange(F.change(x, 1, at: 1_000))
        _ = machine.localChange(F.change(y, 7, at: 1_000, scope: .thisDeviceOnly))
        #expect(machine.startSync() == [F.push(a, batch: 1, cursor: 0, [(x, mine)])])
        // The push is lost; the machine retries the same batch, then pulls B's version first.
        #expect(machine.retry() == [F.push(a, batch: 1, cursor: 0, [(x, mine)])])
        #expect(machine.receive(F.committed(1, [(x, .conflictKept)])) == [F.pull(a, 1, after: 0)])
        let resolved = theirs.with(vector: VersionVector([a: 2, b: 1]))
        #expect(machine.receive(F.page(1, [(x, 2, [theirs, mine])], next: 2)) == [
            .keepInHistory(x, mine), .store(x, resolved), F.push(a, batch: 2, cursor: 2, [(x, resolved)]),
        ])
        #expect(Set(machine.state.records.keys) == [x])
    }

    @Test func aDeviceBackFromALongAbsenceKeepsWhatTheResyncDidNotList() {
        var machine = ZoneSyncMachine(device: a, zone: .keychain)
        for (item, content) in [(x, 1), (y, 2), (z, 3)] as [(ItemID, UInt8)] {
            _ = machine.localChange(F.change(item, content, at: 1_000))
        }
        let first = machine.state.records.mapValues(\.version)
        #expect(machine.startSync() == [F.push(a, batch: 1, cursor: 0, [(x, first[x]!), (y, first[y]!), (z, first[z]!)])])
        #expect(machine.receive(F.committed(1, [(x, .applied), (y, .applied), (z, .applied)])) == [F.pull(a, 1, after: 0)])
        #expect(machine.receive(F.page(1, [(x, 1, [first[x]!]), (y, 2, [first[y]!]), (z, 3, [first[z]!])], next: 3)) == [.synced])
        // Away for months: x, y and z were deleted elsewhere and purged. Meanwhile z changed here
        // (a concurrent update) and w was created here (never uploaded).
        _ = machine.localChange(F.change(z, 4, at: 2_000))
        _ = machine.localChange(F.change(w, 5, at: 2_000))
        let changed = machine.state.records.mapValues(\.version)
        #expect(machine.startSync() == [F.push(a, batch: 2, cursor: 3, [(w, changed[w]!), (z, changed[z]!)])])
        #expect(machine.receive(F.committed(2, [(w, .applied), (z, .applied)])) == [F.pull(a, 2, after: 3)])
        #expect(machine.receive(.cursorExpired(requestID: RequestID(epoch: 1, number: 2))) == [F.pull(a, 3, after: 0, full: true)])
        let other = F.write(6, by: b, [b: 4], at: 3_000)
        #expect(machine.receive(F.page(3, [(q, 90, [other]), (z, 101, [changed[z]!])], next: 101, hasMore: true, collectedAt: 2_500))
            == [.store(q, other), F.pull(a, 4, after: 101, full: true)])
        // Absence is not deletion: the unchanged copies of x and y are kept, not pushed, and
        // reported (decision 0106); z and w survive.
        #expect(machine.receive(F.page(4, [(w, 102, [changed[w]!])], next: 102, collectedAt: 2_500)) == [.unlisted(x), .unlisted(y), .synced])
        #expect(Set(machine.state.records.keys) == [q, z, w, x, y])
        #expect(machine.state.records[x]?.isPending == false && machine.state.records[y]?.isPending == false)
        #expect(machine.state.cursor == 102)
    }

    @Test func aChangeTheServerNeverAcknowledgedSurvivesAResyncAndIsPushed() {
        var (machine, _) = syncedWithX()
        _ = machine.localChange(F.change(x, 2, at: 2_000))
        let update = machine.state.records[x]!.version
        #expect(machine.startSync() == [F.push(a, batch: 2, cursor: 1, [(x, update)])])
        let refused = PushResponse(batchID: 2, status: .refused, results: [.init(item: x, outcome: .tooManySiblings)])
        #expect(machine.receive(refused) == [F.pull(a, 2, after: 1)])
        #expect(machine.receive(.cursorExpired(requestID: RequestID(epoch: 1, number: 2))) == [F.pull(a, 3, after: 0, full: true)])
        #expect(machine.receive(F.page(3, [], next: 40)) == [F.push(a, batch: 3, cursor: 40, [(x, update)])])
        #expect(machine.state.records[x]?.baseline == [])
    }

    @Test func aResolutionOfAValueTheServerPurgedIsKeptAndNotPushedBack() {
        var (machine, _) = syncedWithX()
        let mine = F.write(nil, by: a, [a: 2], at: 3_000, overwritten: [a: 1])
        let theirs = F.write(2, by: b, [a: 1, b: 1], at: 4_000, overwritten: [a: 1])
        _ = machine.localChange(F.change(x, nil, at: 3_000))
        #expect(machine.startSync() == [F.push(a, batch: 2, cursor: 1, [(x, mine)])])
        #expect(machine.receive(F.committed(2, [(x, .conflictKept)])) == [F.pull(a, 2, after: 1)])
        var resolved = theirs.with(vector: VersionVector([a: 3, b: 1]))
        resolved.overwritten = VersionVector([a: 1])
        #expect(machine.receive(F.page(2, [(x, 3, [mine, theirs])], next: 3)) == [
            .store(x, resolved), F.push(a, batch: 3, cursor: 3, [(x, resolved)]),
        ])
        // Meanwhile the item was deleted elsewhere and purged while this device was inactive:
        // the push is refused, and the resync finds a pending resolution of a value the server
        // had. It is not a change of this device's: it is not pushed (reviving the item), and
        // not removed either (absence is not deletion): kept and reported.
        let expired = PushResponse(batchID: 3, status: .cursorExpired, results: [])
        #expect(machine.receive(expired) == [F.pull(a, 3, after: 0, full: true)])
        #expect(machine.receive(F.page(3, [], next: 60)) == [.unlisted(x), .synced])
        #expect(machine.state.records[x]?.isPending == false)
        #expect(!machine.hasPendingChanges)
    }

    @Test func aResyncDropsAPendingResolutionWhoseValueTheServerForgot() {
        var machine = ZoneSyncMachine(device: a, zone: .keychain)
        let older = F.write(3, by: Fixtures.c, [Fixtures.c: 3], at: 1_000)
        let newer = F.write(34, by: b, [b: 5], at: 2_000)
        let resolved = newer.with(vector: VersionVector([a: 1, b: 5, Fixtures.c: 3]))
        #expect(machine.startSync() == [F.pull(a, 1, after: 0)])
        #expect(machine.receive(F.page(1, [(x, 17, [older, newer])], next: 17)) == [
            .keepInHistory(x, older), .store(x, resolved), F.push(a, batch: 1, cursor: 17, [(x, resolved)]),
        ])
        // While this device was inactive, value 34 was deleted and the deletion purged; another
        // device's old deletion then re-created the item. The resync must not revive 34; it keeps
        // it in the item's history (it may be a value the server lost instead, decision 0253).
        let unrelated = F.write(nil, by: DeviceID("device-d")!, [DeviceID("device-d")!: 7], at: 500)
        let expired = PushResponse(batchID: 1, status: .cursorExpired, results: [])
        #expect(machine.receive(expired) == [F.pull(a, 2, after: 0, full: true)])
        #expect(machine.receive(F.page(2, [(x, 34, [unrelated])], next: 40)) == [.keepInHistory(x, resolved), .remove(x), .synced])
        #expect(machine.state.records[x]?.isPending == false)
    }

    @Test func rejectsAVersionOlderThanTheAcknowledgedOneOrClaimingAnUnknownWrite() {
        var (machine, v1) = syncedWithX()
        _ = machine.localChange(F.change(x, 2, at: 2_000))
        let v2 = machine.state.records[x]!.version
        _ = machine.startSync()
        _ = machine.receive(F.committed(2, [(x, .applied)]))
        // v2's successor may have been deleted and the deletion collected since: reported only.
        #expect(machine.receive(F.page(2, [(x, 1, [v1])], next: 2, collectedAt: 2_500)) == [.reject(x, .vectorWentBackwards), .synced])
        _ = machine.startSync()
        let forged = F.write(9, by: b, [a: 7, b: 1], at: 3_000)
        #expect(machine.receive(F.page(3, [(x, 3, [forged])], next: 3)) == [.reject(x, .unknownWriteOfThisDevice), .synced])
        #expect(machine.state.records[x]?.version == v2)
        // Nothing collected since v2 was written: only a server that lost it explains the older
        // version, so v2 is reported and given back (decision 0248).
        _ = machine.startSync()
        #expect(machine.receive(F.page(4, [(x, 4, [v1])], next: 4)) == [.reject(x, .vectorWentBackwards), F.push(a, batch: 3, cursor: 4, [(x, v2)])])
    }

    /// Malicious seed 5 (decision 0235): a server that lists, in place of the version it
    /// acknowledged, an older concurrent one (a replay of its state before the push) or only the
    /// other sibling is refused; listed with a version that descends from it, the item is taken.
    @Test func rejectsAListingThatLeavesOutTheAcknowledgedVersion() throws {
        var machine = ZoneSyncMachine(device: a, zone: .keychain)
        let older = F.write(3, by: c, [c: 2], at: 500)
        _ = machine.localChange(F.change(x, 1, at: 1_000))
        let mine = try #require(machine.state.records[x]?.version)
        #expect(machine.startSync() == [F.push(a, batch: 1, cursor: 0, [(x, mine)])])
        #expect(machine.receive(F.committed(1, [(x, .conflictKept)])) == [F.pull(a, 1, after: 0)])
        #expect(machine.receive(F.page(1, [], next: 4)) == [.synced])
        #expect(machine.startSync() == [F.pull(a, 2, after: 4)])
        // Refused, and given back: the server lost or hides it (decision 0248).
        #expect(machine.receive(F.page(2, [(x, 5, [older])], next: 5))
            == [.reject(x, .acknowledgedVersionLeftOut), F.push(a, batch: 2, cursor: 5, [(x, mine)])])
        #expect(machine.state.records[x]?.version == mine)
        // It held it (a replay): the round pulls on; both siblings: the conflict is resolved as usual.
        #expect(machine.receive(F.committed(2, [(x, .stale)])) == [F.pull(a, 3, after: 5)])
        let actions = machine.receive(F.page(3, [(x, 6, [older, mine])], next: 6))
        #expect(!actions.contains { if case .reject = $0 { true } else { false } })
        // A full resync is not held to it: a deletion may have been collected, the item written anew.
        var resyncing = ZoneSyncMachine(device: a, zone: .keychain)
        _ = resyncing.localChange(F.change(x, 1, at: 1_000))
        _ = resyncing.startSync()
        _ = resyncing.receive(F.committed(1, [(x, .applied)]))
        _ = resyncing.receive(F.page(1, [], next: 4))
        #expect(resyncing.startSync(resyncing: true) == [F.pull(a, 2, after: 0, full: true)])
        let anew = F.write(4, by: c, [c: 9], at: 9_000)
        var lost = resyncing
        // Taken, the value kept in history (decision 0248).
        #expect(resyncing.receive(F.page(2, [(x, 9, [anew])], next: 9, collectedAt: 5_000)) == [
            .keepInHistory(x, mine), .store(x, anew), .synced,
        ])
        // Nothing collected since it was written: the server lost it, and it competes again.
        let resolved = ItemVersion(vector: VersionVector([a: 2, c: 9]), isDeleted: false, modifiedAt: 9_000, device: c, content: [4], origin: VersionVector([c: 9]))
        #expect(lost.receive(F.page(2, [(x, 9, [anew])], next: 9)) == [
            .keepInHistory(x, mine), .store(x, resolved), F.push(a, batch: 2, cursor: 9, [(x, resolved)]),
        ])
    }

    /// Seed 1029 (honest): a deletion this device pushed is collected once every device read it,
    /// and a device that never saw it deletes (or writes) the item anew, with an unrelated vector:
    /// a deletion in the baseline need not be covered.
    @Test func aDeletionInTheBaselineNeedNotBeCovered() {
        var (machine, _) = syncedWithX()
        _ = machine.localChange(F.change(x, nil, at: 2_000))
        let deletion = machine.state.records[x]!.version
        #expect(machine.startSync() == [F.push(a, batch: 2, cursor: 1, [(x, deletion)])])
        #expect(machine.receive(F.committed(2, [(x, .applied)])) == [F.pull(a, 2, after: 1)])
        #expect(machine.receive(F.page(2, [], next: 2)) == [.synced])
        let anew = F.write(nil, by: b, [b: 4], at: 3_000)
        #expect(machine.startSync() == [F.pull(a, 3, after: 2)])
        let actions = machine.receive(F.page(3, [(x, 9, [anew])], next: 9))
        #expect(!actions.contains { if case .reject = $0 { true } else { false } })
        #expect(machine.state.records[x]?.baseline == [anew.vector])
    }

    @Test func itemsThatNeverLeaveTheDeviceAreIgnored() {
        var machine = ZoneSyncMachine(device: a, zone: .keychain)
        #expect(machine.localChange(F.change(x, 1, at: 1, scope: .thisDeviceOnly)) == [])
        #expect(machine.localChange(F.change(y, 1, at: 1, scope: .local)) == [])
        #expect(machine.startSync() == [F.pull(a, 1, after: 0)])
        #expect(machine.state.records.isEmpty && machine.state.writeCounter == 0)
    }

    @Test func afterACrashTheUnansweredBatchIsResentAndOldAnswersAreIgnored() {
        var machine = ZoneSyncMachine(device: a, zone: .keychain)
        _ = machine.localChange(F.change(x, 1, at: 1_000))
        let v1 = machine.state.records[x]!.version
        #expect(machine.startSync() == [F.push(a, batch: 1, cursor: 0, [(x, v1)])])
        var restarted = ZoneSyncMachine(restoring: machine.state)
        #expect(restarted.state.epoch == 2)
        #expect(restarted.receive(F.committed(1, [(x, .applied)])) == [])  // not waiting: ignored
        #expect(restarted.startSync() == [F.push(a, batch: 1, cursor: 0, [(x, v1)])])
        #expect(restarted.receive(F.committed(1, [(x, .applied)])) == [F.pull(a, epoch: 2, 1, after: 0)])
        #expect(restarted.receive(F.page(epoch: 1, 1, [], next: 9)) == [])  // from before the crash
        #expect(restarted.receive(F.page(epoch: 2, 1, [(x, 1, [v1])], next: 1)) == [.synced])
    }
}

import SyncCore
import Testing

/// Transcripts of an old page served again as the answer to a later pull (decision 0188): a page
/// from a server state older than one the server already reported to the device (by the sequence
/// it gave a pushed version, or the account's latest sequence) is refused like a late answer, and
/// the pull is resent; an honest page is taken.
@Suite("Client sync machine: old pages known by their sequence numbers")
struct ZoneSyncMachineOldPageTests {
    typealias F = Fixtures
    let a = Fixtures.a, b = Fixtures.b
    let x = ItemID("x"), y = ItemID("y")

    /// A's write of x, pushed and acknowledged at sequence `sequence`, the account then at `latest`.
    func pushedOnce(sequence: UInt64, latest: UInt64, outcome: ServerMerge.Outcome = .applied) -> (ZoneSyncMachine, ItemVersion) {
        var machine = ZoneSyncMachine(device: a, zone: .keychain)
        let mine = F.write(1, by: a, [a: 1], at: 1_000)
        _ = machine.localChange(F.change(x, 1, at: 1_000))
        #expect(machine.startSync() == [F.push(a, batch: 1, cursor: 0, [(x, mine)])])
        let answer = PushResponse(
            batchID: 1, status: .committed, results: [.init(item: x, outcome: outcome, sequence: sequence)], latestSequence: latest)
        #expect(machine.receive(answer) == [F.pull(a, 1, after: 0, told: latest)])
        #expect(machine.state.records[x]?.sequence == sequence)
        #expect(machine.state.latestSequence == latest)
        return (machine, mine)
    }

    @Test func aLastPageThatEndsBelowTheLatestSequenceIsRefusedAndThePullResent() {
        var (machine, mine) = pushedOnce(sequence: 7, latest: 7)
        // The answer to a pull from before the push: the feed ended at 5 then.
        #expect(machine.receive(F.page(1, [], next: 5)) == [])
        #expect(machine.state.cursor == 0)
        #expect(!machine.isIdle)
        #expect(machine.retry() == [F.pull(a, 2, after: 0, told: 7)])
        #expect(machine.receive(F.page(2, [(x, 7, [mine])], next: 7)) == [.synced])
        #expect(machine.state.cursor == 7)
    }

    @Test func aPageThatListsAnItemBelowItsPushedSequenceIsRefused() {
        // The server kept A's write as a sibling of B's concurrent one (decision 0187's case).
        var (machine, mine) = pushedOnce(sequence: 9, latest: 9, outcome: .conflictKept)
        let theirs = F.write(2, by: b, [b: 1], at: 900)
        // An old page, not the last, from before the push: B's version alone, at sequence 4.
        #expect(machine.receive(F.page(1, [(x, 4, [theirs])], next: 4, hasMore: true)) == [])
        #expect(machine.state.records[x]?.version == mine)
        #expect(machine.state.records[x]?.isPending == false)
        #expect(machine.state.cursor == 0)
        // The resent pull gets the server's state: both siblings; A resolves them.
        #expect(machine.retry() == [F.pull(a, 2, after: 0, told: 9)])
        let actions = machine.receive(F.page(2, [(x, 9, [theirs, mine])], next: 9))
        #expect(!actions.isEmpty)
        #expect(machine.state.cursor == 9)
        #expect(machine.state.records[x]?.version.vector.descends(from: mine.vector) == true)
        #expect(machine.state.records[x]?.version.vector.descends(from: theirs.vector) == true)
    }

    @Test func anHonestPageAfterAPushIsTaken() {
        var (machine, mine) = pushedOnce(sequence: 9, latest: 12)
        let theirs = F.write(3, by: b, [b: 1], at: 1_100)
        // A page that is not the last may end below the latest sequence; the item at its own.
        #expect(machine.receive(F.page(1, [(x, 9, [mine])], next: 9, hasMore: true)) == [F.pull(a, 2, after: 9, told: 12)])
        #expect(machine.receive(F.page(2, [(y, 11, [theirs])], next: 12)) == [.store(y, theirs), .synced])
        #expect(machine.state.cursor == 12)
        #expect(machine.state.records[y]?.sequence == 11)
        // A later write of x lists it higher: taken, and its sequence raised.
        let later = F.write(4, by: b, [a: 1, b: 2], at: 1_200, overwritten: [a: 1])
        #expect(machine.startSync() == [F.pull(a, 3, after: 12)])
        #expect(machine.receive(F.page(3, [(x, 13, [later])], next: 13)) == [.store(x, later), .synced])
        #expect(machine.state.records[x]?.sequence == 13)
        #expect(machine.state.latestSequence == 13)
    }

    @Test func aServerThatAnswersAsOldAgainIsBelievedSoNoDeviceIsStuck() {
        // E.g. restored from a backup without the sequence jump of 0153: its feed ends at 5 now.
        var (machine, mine) = pushedOnce(sequence: 7, latest: 7)
        #expect(machine.receive(F.page(1, [], next: 5)) == [])
        #expect(machine.retry() == [F.pull(a, 2, after: 0, told: 7)])
        #expect(machine.receive(F.page(2, [], next: 5)) == [.synced])
        #expect(machine.state.cursor == 5)
        #expect(machine.state.latestSequence == 5)
        // Its items' sequences went back too: x listed at 6, below the 7 it was given.
        #expect(machine.startSync() == [F.pull(a, 3, after: 5)])
        #expect(machine.receive(F.page(3, [(x, 6, [mine])], next: 6)) == [])
        #expect(machine.retry() == [F.pull(a, 4, after: 5)])
        #expect(machine.receive(F.page(4, [(x, 6, [mine])], next: 6)) == [.synced])
        #expect(machine.state.records[x]?.sequence == 6)
        // From then on its pages are taken at once.
        #expect(machine.startSync() == [F.pull(a, 5, after: 6)])
        #expect(machine.receive(F.page(5, [], next: 6)) == [.synced])
    }

    @Test func aRestoredFeedIsNotHeldToTheSequencesFromBeforeTheRestore() {
        var (machine, mine) = pushedOnce(sequence: 7, latest: 7)
        #expect(machine.receive(F.page(1, [(x, 7, [mine])], next: 7)) == [.synced])
        #expect(machine.startSync() == [F.pull(a, 2, after: 7)])
        #expect(machine.receive(.feedRestored(requestID: RequestID(epoch: 1, number: 2))) == [F.pull(a, 3, after: 0, full: true)])
        // The backup had x at 3; the resync lists it there and ends after the jump.
        let jumped: UInt64 = 1 << 40
        #expect(machine.receive(F.page(3, [(x, 3, [mine])], next: jumped)) == [.synced])
        #expect(machine.state.records[x]?.sequence == 3)
        #expect(machine.state.latestSequence == jumped)
    }

    @Test func aLocalChangeKeepsTheItemsSequence() {
        var (machine, _) = pushedOnce(sequence: 7, latest: 7)
        _ = machine.localChange(F.change(x, 2, at: 2_000))
        #expect(machine.state.records[x]?.isPending == true)
        #expect(machine.state.records[x]?.sequence == 7)
    }
}

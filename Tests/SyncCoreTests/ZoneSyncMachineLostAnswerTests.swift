import SyncCore
import Testing

/// Transcripts of a batch whose answer was lost and whose resend came after the server forgot
/// the batch (the device was away past the inactivity limit), found by the simulation of the
/// shipped driver on seed 1230 (decision 0233).
@Suite("Client sync machine: a batch answered too late")
struct ZoneSyncMachineLostAnswerTests {
    typealias F = Fixtures
    let a = Fixtures.a, b = Fixtures.b
    let x = ItemID("x")

    /// A machine in step at cursor 4 that took a local write of `x` at `time` and pushed it once.
    func pushedOnce(at time: Int64) throws -> (ZoneSyncMachine, ItemVersion) {
        var machine = ZoneSyncMachine(device: a, zone: .keychain)
        #expect(machine.startSync() == [F.pull(a, 1, after: 0)])
        #expect(machine.receive(F.page(1, [], next: 4)) == [.synced])
        _ = machine.localChange(F.change(x, 7, at: time))
        let version = try #require(machine.state.records[x]?.version)
        #expect(machine.startSync() == [F.push(a, batch: 1, cursor: 4, [(x, version)])])
        return (machine, version)
    }

    func tooOld(_ batch: UInt64) -> PushResponse { PushResponse(batchID: batch, status: .cursorExpired, results: []) }

    func lastPage(_ number: UInt64, next: UInt64, collectedAt: Int64?) -> PullResponse<ItemVersion> {
        .changes(requestID: RequestID(epoch: 1, number: number), items: [], nextCursor: next, hasMore: false, deletionsCollectedAt: collectedAt)
    }

    /// The resend may follow a send the server stored; another device deleted the item since and
    /// the deletion was collected: pushing the version again would bring the item back.
    @Test func aResentVersionTheResyncNoLongerListsIsKeptAndReportedNotPushed() throws {
        var (machine, version) = try pushedOnce(at: 1_000)
        #expect(machine.retry() == [F.push(a, batch: 1, cursor: 4, [(x, version)])])
        #expect(machine.receive(tooOld(1)) == [F.pull(a, 2, after: 0, full: true)])
        #expect(machine.state.records[x]?.mayBeOnServer == true)
        #expect(machine.receive(lastPage(2, next: 9, collectedAt: 5_000)) == [.unlisted(x), .synced])
        let record = try #require(machine.state.records[x])
        #expect(!record.isPending && !record.mayBeOnServer && record.version == version)
    }

    /// An incremental page held back and handed to the resync that follows names another question
    /// than the resync asked: it answers no request (R22), is ignored, and the resync is asked
    /// again. Taken, it would read as "the server lists nothing" with its collection time as a
    /// forgotten deletion's, and R49 C2 would keep the write the server never had, never to push
    /// it (honest seed 531 at 400 operations, item 18).
    @Test func anIncrementalPageHandedToAResyncIsNotTakenForItsAnswer() throws {
        var (machine, version) = try pushedOnce(at: 1_000)
        #expect(machine.retry() == [F.push(a, batch: 1, cursor: 4, [(x, version)])])
        let resync = F.pull(a, 2, after: 0, full: true)
        #expect(machine.receive(tooOld(1)) == [resync])
        guard case .pull(let asked) = resync else { return }
        #expect(asked.idOfPage(after: 4, resync: false, collected: false) == .unasked)
        #expect(asked.idOfPage(after: 0, resync: true, collected: false) == .unasked)
        let late = PullResponse<ItemVersion>.changes(
            requestID: asked.idOfPage(after: 4, resync: false, collected: false), items: [], nextCursor: 9, hasMore: false,
            deletionsCollectedAt: 5_000)
        #expect(machine.receive(late) == [])
        #expect(machine.retry() == [F.pull(a, 3, after: 0, full: true)])
        let answer = F.pull(a, 3, after: 0, full: true)
        guard case .pull(let askedAgain) = answer else { return }
        #expect(askedAgain.idOfPage(after: 0, resync: true, collected: true) == askedAgain.requestID)
        #expect(machine.receive(lastPage(3, next: 9, collectedAt: nil)) == [F.push(a, batch: 2, cursor: 9, [(x, version)])])
    }

    /// A batch restored from the durable state after a restart may have gone out before it.
    @Test func aBatchRestoredAfterARestartCountsAsResent() throws {
        let (before, version) = try pushedOnce(at: 1_000)
        var machine = ZoneSyncMachine(restoring: before.state)
        #expect(machine.startSync() == [F.push(a, batch: 1, cursor: 4, [(x, version)])])
        #expect(machine.receive(tooOld(1)) == [F.pull(a, epoch: 2, 1, after: 0, full: true)])
        #expect(machine.state.records[x]?.mayBeOnServer == true)
    }

    /// Sent once and refused as too old: nothing of it was stored, so it is pushed after the resync.
    @Test func aBatchSentOnceAndRefusedAsTooOldIsPushedAfterTheResync() throws {
        var (machine, version) = try pushedOnce(at: 1_000)
        #expect(machine.receive(tooOld(1)) == [F.pull(a, 2, after: 0, full: true)])
        #expect(machine.state.records[x]?.mayBeOnServer == false)
        #expect(machine.receive(lastPage(2, next: 9, collectedAt: 5_000)) == [F.push(a, batch: 2, cursor: 9, [(x, version)])])
    }

    /// A server that never collected a deletion, or collected none since the version was written
    /// (beyond the clock window), cannot have collected its deletion: the version is pushed.
    @Test(arguments: [nil, 1_000 - ModificationTimeBound.window - 1] as [Int64?])
    func aResentVersionIsPushedWhenNoCollectionCanHaveRemovedIt(collectedAt: Int64?) throws {
        var (machine, version) = try pushedOnce(at: 1_000)
        #expect(machine.retry() == [F.push(a, batch: 1, cursor: 4, [(x, version)])])
        #expect(machine.receive(tooOld(1)) == [F.pull(a, 2, after: 0, full: true)])
        #expect(machine.receive(lastPage(2, next: 9, collectedAt: collectedAt)) == [F.push(a, batch: 2, cursor: 9, [(x, version)])])
    }

    /// Refused by quota after the resend: the server merged it as a version it does not hold and
    /// remembers that refusal over every earlier batch, so no send stored it. A later resync after a
    /// collection keeps it pending, set aside, rather than keeping it as one the server lost (honest
    /// seed 801 at 400 operations: the device kept a value no device had pushed, and disagreed).
    @Test func aVersionRefusedByQuotaAfterItsResendIsNoLongerOneTheServerMayHold() throws {
        var (machine, version) = try pushedOnce(at: 1_000)
        #expect(machine.retry() == [F.push(a, batch: 1, cursor: 4, [(x, version)])])
        #expect(machine.receive(tooOld(1)) == [F.pull(a, 2, after: 0, full: true)])
        #expect(machine.receive(lastPage(2, next: 9, collectedAt: nil)) == [F.push(a, batch: 2, cursor: 9, [(x, version)])])
        #expect(machine.state.records[x]?.mayBeOnServer == true)
        let overQuota = PushResponse(batchID: 2, status: .refused, results: [], refused: .init(reason: .quotaExceeded, items: [x]))
        #expect(machine.receive(overQuota) == [F.pull(a, 3, after: 9)])
        #expect(machine.receive(lastPage(3, next: 9, collectedAt: nil)) == [.synced])
        #expect(machine.state.records[x]?.mayBeOnServer == false)
        #expect(machine.startSync() == [F.pull(a, 4, after: 9)])
        #expect(machine.receive(.cursorExpired(requestID: RequestID(epoch: 1, number: 4))) == [F.pull(a, 5, after: 0, full: true)])
        #expect(machine.receive(lastPage(5, next: 12, collectedAt: 5_000)) == [.synced])
        let record = try #require(machine.state.records[x])
        #expect(record.isPending && record.refusal == .quotaExceeded && record.version == version)
    }

    /// Kept when a resync did not list it (R49 C2), then listed older than it: no deletion over it
    /// was collected (the server would list that), so the server never stored it. It competes and
    /// is pushed, not replaced by the older version (R47; honest seed 531 at 400 operations: a
    /// late answer that listed nothing stood for a resync's page, the next resync listed the
    /// item's older version, and the device's unacknowledged write went to history under it).
    @Test func aKeptCopyListedOlderThanItIsPushedNotReplaced() throws {
        var machine = ZoneSyncMachine(device: a, zone: .keychain)
        let first = F.write(1, by: b, [b: 1], at: 500)
        #expect(machine.startSync() == [F.pull(a, 1, after: 0)])
        #expect(machine.receive(F.page(1, [(x, 3, [first])], next: 4)).last == .synced)
        _ = machine.localChange(F.change(x, 7, at: 1_000))
        let version = try #require(machine.state.records[x]?.version)
        #expect(machine.startSync() == [F.push(a, batch: 1, cursor: 4, [(x, version)])])
        #expect(machine.retry() == [F.push(a, batch: 1, cursor: 4, [(x, version)])])
        #expect(machine.receive(tooOld(1)) == [F.pull(a, 2, after: 0, full: true)])
        #expect(machine.receive(lastPage(2, next: 9, collectedAt: 5_000)) == [.unlisted(x), .synced])

        #expect(machine.startSync(resyncing: true) == [F.pull(a, 3, after: 0, full: true)])
        #expect(machine.receive(F.page(3, [(x, 3, [first])], next: 9)) == [F.push(a, batch: 2, cursor: 9, [(x, version)])])
        let record = try #require(machine.state.records[x])
        #expect(record.isPending && record.version == version && record.baseline == [first.vector])
    }

    /// Listed by the resync (the server stored it, or holds another version): merged as usual.
    @Test func aResentVersionTheResyncListsIsMergedAsUsual() throws {
        var (machine, version) = try pushedOnce(at: 1_000)
        #expect(machine.retry() == [F.push(a, batch: 1, cursor: 4, [(x, version)])])
        #expect(machine.receive(tooOld(1)) == [F.pull(a, 2, after: 0, full: true)])
        let page = PullResponse<ItemVersion>.changes(
            requestID: RequestID(epoch: 1, number: 2), items: [ChangedItem(item: x, sequence: 6, versions: [version])], nextCursor: 9,
            hasMore: false, deletionsCollectedAt: 5_000)
        #expect(machine.receive(page) == [.synced])
        let record = try #require(machine.state.records[x])
        #expect(!record.isPending && !record.mayBeOnServer && record.baseline == [version.vector])
    }
}

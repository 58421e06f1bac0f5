import SyncCore
import Testing

@Suite("Server reference model")
struct ServerModelTests {
    let a = Fixtures.a, b = Fixtures.b
    let kv = ZoneID("kv.settings")
    let x = ItemID("x"), y = ItemID("y")

    func sealed(_ vector: [DeviceID: UInt64], deleted: Bool = false) -> SealedVersion {
        SealedVersion(vector: VersionVector(vector), isDeleted: deleted, payload: [1, 2, 3])
    }

    func batch(
        _ device: DeviceID, _ id: UInt64, zone: ZoneID = .keychain, cursor: UInt64 = 0, _ items: [(ItemID, SealedVersion)]
    ) -> PushBatch<SealedVersion> {
        PushBatch(device: device, zone: zone, batchID: id, cursor: cursor, items: items.map { PushedItem(item: $0.0, version: $0.1) })
    }

    func pull(_ device: DeviceID, zone: ZoneID = .keychain, after cursor: UInt64, full: Bool = false, limit: Int = 100) -> PullRequest {
        PullRequest(requestID: RequestID(epoch: 1, number: cursor), device: device, zone: zone, cursor: cursor, isFullResync: full, limit: limit)
    }

    @Test func sequenceNumbersArePerAccountAcrossZones() {
        var server = ServerModel()
        _ = server.push(batch(a, 1, [(x, sealed([a: 1]))]), now: 0)
        _ = server.push(batch(a, 1, zone: kv, [(y, sealed([a: 1]))]), now: 0)
        #expect(server.sequence == 2)
        #expect(server.pull(pull(a, zone: kv, after: 0), now: 0)
            == .changes(requestID: RequestID(epoch: 1, number: 0), items: [ChangedItem(item: y, sequence: 2, versions: [sealed([a: 1])])], nextCursor: 2, hasMore: false))
    }

    @Test func changesSinceACursorComeInPagesWithTheItemsWholeState() {
        var server = ServerModel()
        let items = (1...5).map { ItemID("i\($0)") }
        for (index, item) in items.enumerated() {
            _ = server.push(batch(a, UInt64(index + 1), [(item, sealed([a: UInt64(index + 1)]))]), now: 0)
        }
        _ = server.push(batch(b, 1, [(items[0], sealed([b: 1]))]), now: 0)  // i1 moves to sequence 6
        guard case .changes(_, let first, let next1, true, _) = server.pull(pull(a, after: 0, limit: 2), now: 0),
            case .changes(_, let second, let next2, true, _) = server.pull(pull(a, after: next1, limit: 2), now: 0),
            case .changes(_, let third, let next3, false, _) = server.pull(pull(a, after: next2, limit: 2), now: 0)
        else {
            Issue.record("unexpected paging")
            return
        }
        #expect((first + second + third).map(\.item) == [items[1], items[2], items[3], items[4], items[0]])
        #expect(third.last?.versions.count == 2)
        #expect(next3 == 6)
    }

    @Test func aBatchIsAppliedAllOrNothing() {
        var server = ServerModel(configuration: .init(maximumSiblings: 2))
        _ = server.push(batch(a, 1, [(x, sealed([a: 1]))]), now: 0)
        _ = server.push(batch(b, 1, [(x, sealed([b: 1]))]), now: 0)
        let before = server
        let response = server.push(batch(Fixtures.c, 1, [(y, sealed([Fixtures.c: 1])), (x, sealed([Fixtures.c: 2]))]), now: 0)
        #expect(response.status == .refused)
        #expect(response.results.map(\.outcome) == [.applied, .tooManySiblings])
        #expect(server.zones == before.zones)
        #expect(server.sequence == before.sequence)
    }

    @Test func aRetriedBatchIsMergedAgainAndWhatItStoredComesBackStale() {
        var server = ServerModel()
        let first = server.push(batch(a, 1, [(x, sealed([a: 1]))]), now: 0)
        // Each answer says the sequence the write got and the account's latest (decision 0188).
        #expect(first == PushResponse(batchID: 1, status: .committed, results: [.init(item: x, outcome: .applied, sequence: 1)], latestSequence: 1))
        let retry = server.push(batch(a, 1, [(x, sealed([a: 1]))]), now: 0)
        #expect(retry == PushResponse(batchID: 1, status: .committed, results: [.init(item: x, outcome: .stale)], latestSequence: 1))
        #expect(server.sequence == 1)
    }

    @Test func aRetryAfterTheItemWasDeletedAndPurgedDoesNotBringItBack() {
        var server = ServerModel()
        let upload = batch(a, 1, [(x, sealed([a: 1]))])
        _ = server.push(upload, now: 0)
        _ = server.push(batch(b, 1, [(x, sealed([a: 1, b: 1], deleted: true))]), now: 0)
        _ = server.pull(pull(a, after: 2), now: 0)
        _ = server.pull(pull(b, after: 2), now: 0)
        #expect(server.collectGarbage(now: 0) == 1)
        // Made at a cursor below the horizon: refused whole, so the purged item stays gone.
        #expect(server.push(upload, now: 0).status == .cursorExpired)
        #expect(server.zones[.keychain]?.items[x] == nil)
    }

    @Test func tombstonesWaitForEveryActiveDeviceThenMoveTheHorizon() {
        let limit: Int64 = 1_000
        var server = ServerModel(configuration: .init(inactivityLimit: limit))
        server.register(b, now: 0)
        _ = server.push(batch(a, 1, [(x, sealed([a: 1]))]), now: 0)
        _ = server.push(batch(a, 2, [(x, sealed([a: 2], deleted: true))]), now: 0)
        _ = server.pull(pull(a, after: 2), now: 0)
        #expect(server.collectGarbage(now: 10) == 0)  // b has not acknowledged sequence 2
        _ = server.pull(pull(a, after: 2), now: 500)
        #expect(server.collectGarbage(now: 1_200) == 1)  // b was last seen too long ago
        #expect(server.zones[.keychain]?.horizon == 2)
        // b was inactive when the purge passed its position: even a resync page after 0 (one it
        // might have started before the purge) is refused until it starts over from 0.
        #expect(server.devices[b]?.mustResync == [.keychain])
        #expect(server.pull(pull(b, after: 1), now: 1_300) == .cursorExpired(requestID: RequestID(epoch: 1, number: 1)))
        #expect(server.pull(pull(b, after: 1, full: true), now: 1_300) == .cursorExpired(requestID: RequestID(epoch: 1, number: 1)))
        #expect(server.pull(pull(b, after: 0, full: true), now: 1_300)
            == .changes(requestID: RequestID(epoch: 1, number: 0), items: [], nextCursor: 2, hasMore: false, deletionsCollectedAt: 1_200))
        #expect(server.devices[b]?.mustResync == [])
        #expect(server.pull(pull(a, after: 2), now: 1_300) != .cursorExpired(requestID: RequestID(epoch: 1, number: 2)))

    }

    @Test func aBatchMadeBelowTheHorizonIsRefused() {
        var server = ServerModel(configuration: .init(inactivityLimit: 100))
        _ = server.push(batch(a, 1, [(x, sealed([a: 1], deleted: true))]), now: 0)
        _ = server.pull(pull(a, after: 1), now: 0)
        #expect(server.collectGarbage(now: 0) == 1)
        let stale = batch(b, 1, cursor: 0, [(x, sealed([b: 1]))])
        #expect(server.push(stale, now: 50) == PushResponse(batchID: 1, status: .cursorExpired, results: []))
        #expect(server.zones[.keychain]?.items[x] == nil)
        #expect(server.push(batch(b, 2, cursor: 1, [(x, sealed([b: 1]))]), now: 50).status == .committed)
    }

    @Test func revokedDevicesNoLongerHoldTombstonesBack() {
        var server = ServerModel()
        server.register(b, now: 0)
        _ = server.push(batch(a, 1, [(x, sealed([a: 1], deleted: true))]), now: 0)
        _ = server.pull(pull(a, after: 1), now: 0)
        #expect(server.collectGarbage(now: 0) == 0)
        server.revoke(b)
        #expect(server.activeDevices(now: 0) == [a])
        #expect(server.collectGarbage(now: 0) == 1)
    }

    @Test func theBrokenMergeRuleIsOffByDefault() {
        #expect(ServerModel.Configuration().mergeRule == .versionVectors)
    }
}

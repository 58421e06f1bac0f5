import SyncCore
import Testing

/// The one batch rule, as a pure function: what it decides for a working set.
@Suite("Batch merge rule")
struct BatchMergeTests {
    typealias Rule = BatchMerge
    let a = Fixtures.a, b = Fixtures.b

    func sealed(_ vector: [DeviceID: UInt64], bytes: Int = 10, deleted: Bool = false) -> SealedVersion {
        SealedVersion(vector: VersionVector(vector), isDeleted: deleted, payload: Array(repeating: 1, count: bytes))
    }

    func batch(_ items: [(String, SealedVersion)], id: UInt64? = 1, cursor: UInt64 = 0) -> Rule.Batch<String, SealedVersion> {
        Rule.Batch(batchID: id, cursor: cursor, items: items.map { Rule.Incoming(key: $0.0, version: $0.1) })
    }

    func set(
        latest: UInt64 = 0, usage: Rule.Usage = .init(), horizon: UInt64 = 0, mustResync: Bool = false,
        last: Rule.RememberedBatch<String>? = nil, stored: [String: [SealedVersion]] = [:]
    ) -> Rule.WorkingSet<String, SealedVersion> {
        Rule.WorkingSet(latestSequence: latest, usage: usage, horizon: horizon, mustResync: mustResync, lastBatch: last, stored: stored)
    }

    @Test func acceptedWritesGetTheNextSequencesAndTheUsageGrows() throws {
        let decision = Rule.decide(
            batch([("x", sealed([a: 2], bytes: 30)), ("y", sealed([a: 1])), ("x", sealed([a: 1]))]),
            in: set(latest: 5, usage: .init(items: 1, bytes: 20), stored: ["x": [sealed([a: 1], bytes: 20)]]), limits: .init())
        guard case .commit(let plan) = decision else { Issue.record("not committed: \(decision.answer)"); return }
        #expect(plan.answer.results.map(\.sequence) == [6, 7, nil])
        #expect(plan.answer.results.map(\.outcome) == [.applied, .applied, .stale])
        #expect(plan.order == ["x", "y"])
        #expect(plan.writes["x"]?.isNew == false && plan.writes["y"]?.isNew == true)
        #expect(plan.latestSequence == 7)
        #expect(plan.usage == Rule.Usage(items: 2, bytes: 40))
    }

    @Test func aRetryIsAnsweredFromMemoryAndAnOlderBatchIsSuperseded() {
        let remembered = Rule.Answer<String>(status: .committed, results: [.init(key: "x", outcome: .applied, sequence: 3)], latestSequence: 3)
        let working = set(latest: 9, last: Rule.RememberedBatch(batchID: 4, answer: remembered))
        guard case .answer(let retry, false, false) = Rule.decide(batch([("x", sealed([a: 1]))], id: 4), in: working, limits: .init()),
            case .answer(let older, false, false) = Rule.decide(batch([("x", sealed([a: 1]))], id: 3), in: working, limits: .init())
        else { Issue.record("expected answers that write nothing"); return }
        #expect(retry == remembered)
        #expect(older.status == .superseded && older.latestSequence == 9)
    }

    @Test(arguments: [(UInt64(2), false), (UInt64(5), true)])
    func aBatchBelowTheHorizonOrFromADeviceThatMustResyncIsRefusedWhole(_ cursor: UInt64, _ mustResync: Bool) {
        let decision = Rule.decide(batch([("x", sealed([a: 1]))], cursor: cursor), in: set(latest: 6, horizon: 3, mustResync: mustResync), limits: .init())
        guard case .answer(let answer, true, false) = decision else { Issue.record("expected a remembered refusal"); return }
        #expect(answer.status == .cursorExpired)
    }

    @Test func tooManySiblingsNamesTheItems() {
        let decision = Rule.decide(
            batch([("fresh", sealed([a: 1])), ("x", sealed([b: 1]))]),
            in: set(stored: ["x": [sealed([a: 1])]]), limits: .init(maximumSiblings: 1))
        guard case .answer(let answer, true, true) = decision else { Issue.record("expected a refusal"); return }
        #expect(answer.status == .tooManySiblings && answer.refused == ["x"])
        #expect(answer.results.map(\.outcome) == [.applied, .tooManySiblings])
        #expect(answer.results.allSatisfy { $0.sequence == nil })
    }

    @Test func quotaRefusalNamesWhatAddsAndLetsUpdatesAndDeletionsPass() {
        let stored = ["x": [sealed([a: 1], bytes: 40)], "y": [sealed([a: 1], bytes: 40)]]
        let full = set(latest: 2, usage: .init(items: 2, bytes: 80), stored: stored)
        let limits = Rule.Limits(maximumItems: 3, maximumBytes: 100)
        let grows = Rule.decide(
            batch([("x", sealed([a: 2], bytes: 40)), ("n1", sealed([a: 1])), ("n2", sealed([a: 1])), ("y", sealed([a: 2], bytes: 50))]),
            in: full, limits: limits)
        #expect(grows.answer.status == .quotaExceeded)
        #expect(grows.answer.refused == ["n1", "n2", "y"])
        // Over a quota that was lowered meanwhile, updates that do not grow and deletions still pass.
        let overQuota = set(latest: 2, usage: .init(items: 2, bytes: 80), stored: stored)
        let shrinking = Rule.decide(
            batch([("x", sealed([a: 2], bytes: 40)), ("y", sealed([a: 2], bytes: 5, deleted: true))]),
            in: overQuota, limits: .init(maximumItems: 1, maximumBytes: 10))
        guard case .commit(let plan) = shrinking else { Issue.record("refused: \(shrinking.answer)"); return }
        #expect(plan.usage == Rule.Usage(items: 2, bytes: 45))
    }
}

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

    func batch(_ items: [(String, SealedVersion)], cursor: UInt64 = 0) -> Rule.Batch<String, SealedVersion> {
        Rule.Batch(cursor: cursor, items: items.map { Rule.Incoming(key: $0.0, version: $0.1) })
    }

    func set(
        latest: UInt64 = 0, usage: Rule.Usage = .init(), horizon: UInt64 = 0, mustResync: Bool = false,
        stored: [String: [SealedVersion]] = [:]
    ) -> Rule.WorkingSet<String, SealedVersion> {
        Rule.WorkingSet(latestSequence: latest, usage: usage, horizon: horizon, mustResync: mustResync, stored: stored)
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

    /// There is no batch memory: a batch sent again after its answer was lost is merged again, and
    /// what the first send stored comes back stale, without a sequence and without growing usage.
    @Test func aBatchSentAgainIsMergedAgainAndWhatItStoredComesBackStale() throws {
        let stored = sealed([a: 1])
        let decision = Rule.decide(
            batch([("x", stored), ("y", sealed([a: 2]))]),
            in: set(latest: 9, usage: .init(items: 1, bytes: 10), stored: ["x": [stored]]), limits: .init())
        guard case .commit(let plan) = decision else { Issue.record("not committed: \(decision.answer)"); return }
        #expect(plan.answer.results.map(\.outcome) == [.stale, .applied])
        #expect(plan.answer.results.map(\.sequence) == [nil, 10])
        #expect(plan.order == ["y"] && plan.usage == Rule.Usage(items: 2, bytes: 20))
    }

    @Test(arguments: [(UInt64(2), false), (UInt64(5), true)])
    func aBatchBelowTheHorizonOrFromADeviceThatMustResyncIsRefusedWhole(_ cursor: UInt64, _ mustResync: Bool) {
        let decision = Rule.decide(batch([("x", sealed([a: 1]))], cursor: cursor), in: set(latest: 6, horizon: 3, mustResync: mustResync), limits: .init())
        guard case .answer(let answer, false) = decision else { Issue.record("expected a refusal that acknowledges nothing"); return }
        #expect(answer.status == .cursorExpired)
    }

    @Test func tooManySiblingsNamesTheItems() {
        let decision = Rule.decide(
            batch([("fresh", sealed([a: 1])), ("x", sealed([b: 1]))]),
            in: set(stored: ["x": [sealed([a: 1])]]), limits: .init(maximumSiblings: 1))
        guard case .answer(let answer, true) = decision else { Issue.record("expected a refusal"); return }
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

import SyncCore
import Testing

@Suite("Server merge rule")
struct ServerMergeTests {
    let a = Fixtures.a, b = Fixtures.b, c = Fixtures.c

    func sealed(_ vector: [DeviceID: UInt64], deleted: Bool = false) -> SealedVersion {
        SealedVersion(vector: VersionVector(vector), isDeleted: deleted, payload: [UInt8(vector.count)])
    }

    @Test func aDominatedOrEqualVersionIsStaleAndNotStored() {
        let stored = [sealed([a: 2])]
        for incoming in [sealed([a: 1]), sealed([a: 2])] {
            let result = ServerMerge.merge(incoming, into: stored)
            #expect(result.outcome == .stale)
            #expect(result.siblings == stored && result.replaced.isEmpty)
        }
    }

    @Test func aDominatingVersionReplacesEveryVersionItDominates() {
        let result = ServerMerge.merge(sealed([a: 1, b: 1]), into: [sealed([a: 1]), sealed([b: 1])])
        #expect(result.outcome == .applied)
        #expect(result.siblings == [sealed([a: 1, b: 1])])
        #expect(result.replaced == [sealed([a: 1]), sealed([b: 1])])
    }

    @Test func aConcurrentVersionIsKeptAsASibling() {
        let result = ServerMerge.merge(sealed([b: 1]), into: [sealed([a: 1])])
        #expect(result.outcome == .conflictKept)
        #expect(Set(result.siblings) == [sealed([a: 1]), sealed([b: 1])])
    }

    @Test func aWriteBeyondTheSiblingBoundIsRefusedWithoutDroppingAnything() {
        let stored = [sealed([a: 1]), sealed([b: 1])]
        let refused = ServerMerge.merge(sealed([c: 1]), into: stored, maximumSiblings: 2)
        #expect(refused.outcome == .tooManySiblings)
        #expect(refused.siblings == stored)
        // A resolution dominating the siblings always fits.
        let resolution = ServerMerge.merge(sealed([a: 1, b: 1, c: 2]), into: stored, maximumSiblings: 2)
        #expect(resolution.outcome == .applied)
    }

    /// Random causal histories: each device writes over the join of some versions it has seen.
    static func history(seed: UInt64, count: Int) -> [SealedVersion] {
        var random = TestRandom(seed: seed)
        let devices = [Fixtures.a, Fixtures.b, Fixtures.c, DeviceID("device-d")!]
        var counters: [DeviceID: UInt64] = [:]
        var versions: [SealedVersion] = []
        for index in 0..<count {
            let device = devices.randomElement(using: &random)!
            let seen = versions.filter { _ in Bool.random(using: &random) }.map(\.vector)
            counters[device, default: 0] += 1
            let vector = VersionVector.join(seen).written(by: device, counter: max(counters[device]!, VersionVector.join(seen)[device] + 1))
            counters[device] = vector[device]
            versions.append(SealedVersion(vector: vector, isDeleted: index % 5 == 4, payload: [UInt8(index)]))
        }
        return versions
    }

    static func mergeAll(_ versions: [SealedVersion]) -> [SealedVersion] {
        versions.reduce(into: []) { stored, version in stored = ServerMerge.merge(version, into: stored).siblings }
    }

    @Test(arguments: 0..<40 as Range<UInt64>)
    func theStoredSetDoesNotDependOnArrivalOrder(seed: UInt64) {
        var random = TestRandom(seed: seed ^ 0xABCD)
        let versions = Self.history(seed: seed, count: 12)
        let expected = Set(Self.mergeAll(versions))
        for _ in 0..<5 {
            #expect(Set(Self.mergeAll(versions.shuffled(using: &random))) == expected)
        }
        // Exactly the versions no other one dominates: nothing undominated is dropped.
        let undominated = versions.filter { version in
            !versions.contains { $0.vector.compare(to: version.vector) == .dominates }
        }
        #expect(expected == Set(undominated))
    }

    @Test(arguments: 0..<40 as Range<UInt64>)
    func mergingAgainIsIdempotent(seed: UInt64) {
        let versions = Self.history(seed: seed, count: 12)
        let stored = Self.mergeAll(versions)
        for version in versions {
            let again = ServerMerge.merge(version, into: stored)
            #expect(again.outcome == .stale)
            #expect(again.siblings == stored)
        }
    }
}

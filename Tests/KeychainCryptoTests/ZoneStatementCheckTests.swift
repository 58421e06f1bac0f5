import Foundation
import KeychainCrypto
import SyncCore
import Testing

/// The rules of decision 0180: statements with an extent round-trip and resist tampering, views
/// are computed from versions, and the comparison finds hidden writes and diverged states whatever
/// positions the server gave, while honest later states, deletions and collected tombstones pass.
@Suite struct ZoneStatementCheckTests {
    let a = DeviceID("deviceA")!
    let b = DeviceID("deviceB")!
    let hasher = ZoneStateDigest.Hasher(accountKey: .generate())
    let now: Int64 = 1_800_000_000_000

    func vector(_ counters: [DeviceID: UInt64]) -> VersionVector { VersionVector(counters) }

    func view(_ versions: [(String, [DeviceID: UInt64], Bool)]) -> ZoneStateView {
        ZoneStateView(zone: "keychain", hasher: hasher, versions: versions.map { (item: ItemID($0.0), vector: vector($0.1), isDeleted: $0.2) })
    }

    func statement(of view: ZoneStateView, by device: DeviceID, position: UInt64 = 10, madeAt: Int64? = nil, number: UInt64 = 1) -> ZoneStatement {
        ZoneStatement(
            account: "acct", zone: "keychain", device: device, epoch: 1, number: number, previous: ZoneStatement.none, position: position,
            digest: view.digest, logHead: ZoneStatement.none,
            extent: .init(madeAt: madeAt ?? now, frontier: view.frontier, liveFrontier: view.liveFrontier))
    }

    @Test func aStatementWithAnExtentRoundTripsAndEveryChangedByteFails() throws {
        let key = DeviceSigningKey.generate()
        let stated = statement(of: view([("x", [a: 1], false), ("y", [a: 2, b: 1], true)]), by: a)
        let wire = try stated.signed(with: key)
        #expect(try ZoneStatement(verifying: wire, publicKey: key.publicKey) == stated)
        for index in stride(from: 0, to: wire.count, by: 7) {
            var tampered = wire
            tampered[index] ^= 0x01
            #expect(throws: CryptoError.self) { try ZoneStatement(verifying: tampered, publicKey: key.publicKey) }
        }
    }

    @Test func theDigestLeavesDeletionsOutAndTheFrontierKeepsThem() {
        let withTombstone = view([("x", [a: 1], false), ("y", [a: 3], true)])
        let collected = view([("x", [a: 1], false)])
        #expect(withTombstone.digest == collected.digest)
        #expect(withTombstone.frontier == vector([a: 3]))
        #expect(withTombstone.liveFrontier == vector([a: 1]))
        #expect(collected.frontier == vector([a: 1]))
    }

    @Test func aHiddenNewestWriteIsWithheldWhateverThePositions() {
        let full = view([("x", [a: 1], false), ("y", [a: 2], false)])
        let hidden = view([("x", [a: 1], false)])
        // The server gave B a later position than A's: positions play no part.
        for position: UInt64 in [1, 10, 1000] {
            #expect(ZoneStatementCheck.compare(hidden, with: statement(of: full, by: a, position: position), now: now) == .withheld(a))
        }
    }

    @Test func aHiddenOlderWriteDivergesAtTheSameWrites() {
        let full = view([("x", [a: 1], false), ("y", [a: 2], false)])
        let hidden = view([("y", [a: 2], false)])
        #expect(ZoneStatementCheck.compare(hidden, with: statement(of: full, by: a), now: now) == .diverged(a))
        // Older than the collection window, the same writes with other versions are no finding:
        // items it names may have been deleted and collected since.
        let old = statement(of: full, by: a, madeAt: now - ZoneStatementCheck.freshness - 1)
        #expect(ZoneStatementCheck.compare(hidden, with: old, now: now) == nil)
        // A stale version served instead of the current one diverges too.
        let stale = view([("x", [a: 1], false), ("y", [a: 2], false), ("z", [a: 1, b: 1], false)])
        let current = view([("x", [a: 1], false), ("y", [a: 2], false), ("z", [a: 2, b: 1], true)])
        #expect(ZoneStatementCheck.compare(stale, with: statement(of: current, by: b), now: now) != nil)
    }

    @Test func honestStatesPass() {
        let earlier = view([("x", [a: 1], false), ("y", [a: 2], false)])
        // The same state.
        #expect(ZoneStatementCheck.compare(earlier, with: statement(of: earlier, by: a), now: now) == nil)
        // A later state: y deleted by B, a new write by B.
        let later = view([("x", [a: 1], false), ("y", [a: 2, b: 1], true), ("z", [b: 2], false)])
        #expect(ZoneStatementCheck.compare(later, with: statement(of: earlier, by: a), now: now) == nil)
        // The later state of a device that read the whole feed after y's tombstone was collected,
        // against a statement made after the deletion: the deletion was stated before that read.
        let collected = view([("x", [a: 1], false), ("z", [b: 2], false)])
        let afterDeletion = view([("x", [a: 1], false), ("y", [a: 2, b: 1], true)])
        #expect(ZoneStatementCheck.compare(collected, with: statement(of: afterDeletion, by: a), excusing: afterDeletion.frontier, now: now) == nil)
        // A statement older than the collection window is not held against a state that lost
        // the tombstone; a fresh one is.
        let old = statement(of: earlier, by: a, madeAt: now - ZoneStatementCheck.freshness - 1)
        #expect(ZoneStatementCheck.compare(collected, with: old, now: now) == nil)
        #expect(ZoneStatementCheck.compare(collected, with: statement(of: earlier, by: a), now: now) == .withheld(a))
        // Stamped a little ahead of this device's reading of the server's clock, a statement counts
        // as made now; far ahead, its age cannot be told and it counts for nothing (0239).
        let slightlyAhead = statement(of: earlier, by: a, madeAt: now + ZoneStatementCheck.clockTolerance)
        #expect(ZoneStatementCheck.compare(collected, with: slightlyAhead, now: now) == .withheld(a))
        let farAhead = statement(of: earlier, by: a, madeAt: now + ZoneStatementCheck.clockTolerance + 1)
        #expect(ZoneStatementCheck.compare(collected, with: farAhead, now: now) == nil)
        // A statement of the 0120 form, without an extent, is compared with nothing.
        var bare = statement(of: earlier, by: a)
        bare.extent = nil
        #expect(ZoneStatementCheck.compare(view([]), with: bare, now: now) == nil)
    }

    @Test func aHiddenDeletionIsWithheldUnlessStatedBeforeTheLastWholeRead() {
        let before = view([("x", [a: 1], false), ("y", [b: 1], false)])
        let deleted = view([("x", [a: 1], false), ("y", [a: 2, b: 1], true)])
        // The device was served y's earlier version in place of its tombstone: its live writes
        // cover the statement's, and its frontier is not the statement's.
        #expect(ZoneStatementCheck.compare(before, with: statement(of: deleted, by: a), now: now) == .withheld(a))
        #expect(ZoneStatementCheck.compare(before, with: statement(of: deleted, by: a), excusing: before.frontier, now: now) == .withheld(a))
        // Stated before the device last read the whole feed, the deletion may have been
        // collected before that read.
        #expect(ZoneStatementCheck.compare(before, with: statement(of: deleted, by: a), excusing: deleted.frontier, now: now) == nil)
    }

    @Test func aStatementMustContinueTheOneVerified() {
        let first = statement(of: view([("x", [a: 1], false)]), by: a, number: 4)
        let verified = ZoneStatementCheck.Verified(number: 4, hash: [UInt8](repeating: 7, count: 32))
        #expect(ZoneStatementCheck.continuation(of: nil, by: first, hash: [1]) == nil)
        #expect(ZoneStatementCheck.continuation(of: verified, by: first, hash: verified.hash) == nil)
        #expect(ZoneStatementCheck.continuation(of: verified, by: first, hash: [1]) == .forked(a))
        var older = first
        older.number = 3
        #expect(ZoneStatementCheck.continuation(of: verified, by: older, hash: [1]) == .rolledBack(a))
        var next = first
        next.number = 5
        #expect(ZoneStatementCheck.continuation(of: verified, by: next, hash: [1]) == .forked(a))
        next.previous = verified.hash
        #expect(ZoneStatementCheck.continuation(of: verified, by: next, hash: [1]) == nil)
        var later = first
        later.number = 9
        #expect(ZoneStatementCheck.continuation(of: verified, by: later, hash: [1]) == nil)
    }

    /// The cost of 0180 for a 10,000-item zone: the view computed whole (what a device does at the
    /// end of every pull that ends in step) and the statement's size.
    @Test func theViewOfTenThousandItemsIsCheapAndTheStatementSmall() throws {
        let devices = (0..<5).map { DeviceID("device-\($0)-0123456789abcdef0123456789ab")! }
        var versions: [(item: ItemID, vector: VersionVector, isDeleted: Bool)] = []
        for index in 0..<10_000 {
            let writer = devices[index % 5]
            let other = devices[(index + 1) % 5]
            let counters: [DeviceID: UInt64] = [writer: UInt64(index + 1), other: UInt64(index)]
            versions.append((item: ItemID(String(format: "%064x", index)), vector: VersionVector(counters), isDeleted: index % 10 == 0))
        }
        let clock = ContinuousClock()
        var computed: ZoneStateView?
        let elapsed = clock.measure { computed = ZoneStateView(zone: "keychain", hasher: hasher, versions: versions) }
        let view = try #require(computed)
        let key = DeviceSigningKey.generate()
        var stated = statement(of: view, by: devices[0])
        stated.account = "an-account-name-of-32-characters"
        let wire = try stated.signed(with: key)
        // Kept terms: after one item changed, only its term is computed again.
        var cache = ZoneStateViewCache(zone: "keychain", hasher: hasher)
        var items = versions.map { (item: $0.item, versions: [ZoneStateVersion(vector: $0.vector, isDeleted: $0.isDeleted)]) }
        #expect(cache.view(of: items) == view)
        items[7].versions = [ZoneStateVersion(vector: items[7].versions[0].vector.incremented(for: devices[1]), isDeleted: false)]
        var updated: ZoneStateView?
        let incremental = clock.measure { updated = cache.view(of: items) }
        let recomputed = ZoneStateView(
            zone: "keychain", hasher: hasher,
            versions: items.map { (item: $0.item, vector: $0.versions[0].vector, isDeleted: $0.versions[0].isDeleted) })
        #expect(updated == recomputed)
        #expect(updated != view)
        print("0180 cost: view of 10,000 items in \(elapsed) whole, \(incremental) with kept terms after one change; statement \(wire.count) bytes with 5 devices")
        #expect(wire.count < 4096)
        #expect(view.frontier[devices[0]] == 9_999)
        #expect(elapsed < .seconds(5))
    }
}

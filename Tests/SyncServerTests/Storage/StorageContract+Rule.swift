import Foundation
import SyncCore
import SyncServer
import Testing

/// The one batch rule as every backend keeps it: a batch sent again merged again, `mustResync`, acknowledgement only
/// of a served page, per-item refusals and the byte quota (decisions 0100-0102).
extension StorageContract {
    static let ruleCases: [StorageContractCase] = [
        StorageContractCase(name: "batchSentAgainIsMergedAgainAndWhatItStoredComesBackStale") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            _ = try await Fixture.register("d", token: 1, account: account, in: storage)
            let first = try await storage.upload(Fixture.batch(["x": ["d": 1], "y": ["d": 1]], account: account), limits: Fixture.limits, now: Fixture.epoch)
            _ = try await storage.upload(Fixture.batch(["x": ["d": 2]], account: account), limits: Fixture.limits, now: Fixture.epoch)
            // No batch memory: the batch sent again (its answer lost) is merged again, and what the
            // first send stored comes back stale, with no sequence and nothing written.
            let again = try await storage.upload(Fixture.batch(["x": ["d": 2]], account: account), limits: Fixture.limits, now: Fixture.epoch)
            #expect(again.results == [.init(id: "x", outcome: .stale, sequence: nil)])
            #expect(again.latestSequence == 3)
            #expect(first.results.map(\.sequence) == [1, 2])
            let page = try await Fixture.page(account: account, in: storage)
            #expect(page.items.map(\.item) == ["y", "x"])
            #expect(page.cursor == 3)
        },
        StorageContractCase(name: "deviceInactiveWhenItsTombstonesWereCollectedMustResyncFromZero") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            _ = try await Fixture.register("one", token: 1, account: account, in: storage)
            _ = try await Fixture.register("two", token: 2, account: account, in: storage)
            _ = try await Fixture.upload(["x": ["one": 1]], account: account, in: storage)
            _ = try await Fixture.upload(["x": ["one": 2]], deleted: true, account: account, cursor: 1, in: storage)
            try await storage.acknowledge(device: Fixture.device("one"), of: account, zone: "keychain", through: 2, now: Fixture.later(100))
            // "two" was last seen at the epoch: inactive, it no longer holds the tombstone back.
            #expect(try await storage.collectGarbage(activeSince: Fixture.later(50), now: Fixture.later(150)) == 1)
            let two = Fixture.device("two")
            // Its cursor 2 is not below the horizon, but it may have missed the deletion: every pull
            // and push except a resync from 0 is refused, even the next page of a resync.
            for (after, full) in [(2, false), (1, true)] as [(UInt64, Bool)] {
                let feed = try await storage.changes(ChangeQuery(
                    account: account, zone: "keychain", after: after, limit: 10, fullResync: full, device: two, now: Fixture.later(200)))
                #expect(feed == .cursorExpired(horizon: 2), "after \(after), full \(full)")
            }
            let batch = UploadBatch(account: account, device: two, zone: "keychain", cursor: 2, items: [
                .init(key: "x", version: Fixture.version(["one": 1, "two": 1])),
            ])
            try await Fixture.expectCode(.cursorExpired) { _ = try await storage.upload(batch, limits: Fixture.limits, now: Fixture.later(200)) }
            let resync = try await storage.changes(ChangeQuery(
                account: account, zone: "keychain", after: 0, limit: 10, fullResync: true, device: two, now: Fixture.later(200)))
            // Every page says when the zone's tombstones were last collected (decision 0175).
            #expect(resync == .page(ChangePage(items: [], cursor: 2, hasMore: false, deletionsCollectedAt: Fixture.later(150))))
            #expect(try await storage.upload(batch, limits: Fixture.limits, now: Fixture.later(200)).results.map(\.outcome) == [.applied])
        },
        StorageContractCase(name: "pullRefusedWithCursorExpiredAcknowledgesNothing") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            _ = try await Fixture.register("one", token: 1, account: account, in: storage)
            _ = try await Fixture.register("two", token: 2, account: account, in: storage)
            _ = try await Fixture.upload(["x": ["one": 1]], deleted: true, account: account, in: storage)
            try await storage.acknowledge(device: Fixture.device("one"), of: account, zone: "keychain", through: 1, now: Fixture.later(100))
            #expect(try await storage.collectGarbage(activeSince: Fixture.later(50), now: Date()) == 1)
            _ = try await Fixture.upload(["y": ["one": 1]], deleted: true, account: account, cursor: 1, in: storage)
            try await storage.acknowledge(device: Fixture.device("one"), of: account, zone: "keychain", through: 2, now: Fixture.later(200))
            // "two" signs in again (active now) and asks after 2 without resyncing: refused, and the
            // refused cursor is not taken as applied, so y's tombstone stays.
            _ = try await storage.registerDevice(
                NewDevice(account: account, id: Fixture.device("two"), name: "two", tokenHash: Fixture.tokenHash(3)), maximumDevices: 10,
                now: Fixture.later(200))
            let refused = try await storage.changes(ChangeQuery(
                account: account, zone: "keychain", after: 2, limit: 10, device: Fixture.device("two"), now: Fixture.later(200)))
            #expect(refused == .cursorExpired(horizon: 1))
            #expect(try await storage.collectGarbage(activeSince: Fixture.later(150), now: Date()) == 0)
            // A served page acknowledges its cursor.
            _ = try await storage.changes(ChangeQuery(
                account: account, zone: "keychain", after: 0, limit: 10, fullResync: true, device: Fixture.device("two"), now: Fixture.later(200)))
            _ = try await storage.changes(ChangeQuery(
                account: account, zone: "keychain", after: 2, limit: 10, device: Fixture.device("two"), now: Fixture.later(200)))
            #expect(try await storage.collectGarbage(activeSince: Fixture.later(150), now: Date()) == 1)
        },
        StorageContractCase(name: "refusalsNameTheItemsThatCausedThem") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            let limits = UploadLimits(maximumItemsPerAccount: 2, maximumSiblings: 2)
            _ = try await Fixture.upload(["a": ["d": 1]], account: account, limits: limits, in: storage)
            _ = try await Fixture.upload(["a": ["e": 1]], account: account, limits: limits, in: storage)
            let siblings = try await Fixture.refusal {
                _ = try await Fixture.upload(["a": ["f": 1], "b": ["d": 1]], account: account, limits: limits, in: storage)
            }
            #expect(siblings?.code == .tooManySiblings && siblings?.items == ["a"])
            let quota = try await Fixture.refusal {
                _ = try await Fixture.upload(["a": ["d": 2, "e": 1], "b": ["d": 1], "c": ["d": 1]], account: account, limits: limits, in: storage)
            }
            #expect(quota?.code == .quotaExceeded && quota?.items == ["b", "c"])
        },
        StorageContractCase(name: "byteQuotaCountsEveryWriteAndCollectionIncrementally") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            _ = try await Fixture.register("d", token: 1, account: account, in: storage)
            let limits = UploadLimits(maximumItemsPerAccount: 100, maximumBytesPerAccount: 100)
            func upload(_ items: [(ItemID, UInt64, Int)], deleted: Bool = false, cursor: UInt64 = 0) async throws -> UploadReceipt {
                let batch = UploadBatch(account: account, device: Fixture.device("d"), zone: "keychain", cursor: cursor, items: items.map {
                    .init(key: $0.0, version: SealedVersion(vector: Fixture.vector(["d": $0.1]), isDeleted: deleted, payload: Array(repeating: 7, count: $0.2)))
                })
                return try await storage.upload(batch, limits: limits, now: Fixture.epoch)
            }
            _ = try await upload([("a", 1, 40)])
            // New items past the quota are named; an update of the same size is not.
            let refused = try await Fixture.refusal { _ = try await upload([("a", 2, 40), ("b", 1, 40), ("c", 1, 40)]) }
            #expect(refused?.code == .quotaExceeded && refused?.items == ["b", "c"])
            _ = try await upload([("a", 2, 40), ("b", 1, 40)])  // 80 bytes
            // A bigger update of an existing item adds bytes too.
            let grown = try await Fixture.refusal { _ = try await upload([("a", 3, 70)]) }
            #expect(grown?.items == ["a"])
            _ = try await upload([("a", 3, 10)], deleted: true)  // 50 bytes: a deletion always passes
            try await storage.acknowledge(device: Fixture.device("d"), of: account, zone: "keychain", through: 4, now: Fixture.epoch)
            #expect(try await storage.collectGarbage(activeSince: nil, now: Date()) == 1)  // 40 bytes
            #expect(try await upload([("c", 1, 40), ("e", 1, 20)], cursor: 4).results.count == 2)  // exactly 100
            let full = try await Fixture.refusal { _ = try await upload([("f", 1, 1)], cursor: 4) }
            #expect(full?.items == ["f"])
        },
        StorageContractCase(name: "pageEndsWithTheItemThatReachesItsByteBudget") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            let batch = UploadBatch(account: account, device: Fixture.device("d"), zone: "keychain", cursor: 0, items: ["a", "b", "c", "d"].map {
                .init(key: $0, version: SealedVersion(vector: Fixture.vector(["d": 1]), isDeleted: false, payload: Array(repeating: 1, count: 40)))
            })
            _ = try await storage.upload(batch, limits: Fixture.limits, now: Fixture.epoch)
            func page(after: UInt64, bytes: Int) async throws -> ChangePage? {
                guard case .page(let page) = try await storage.changes(
                    ChangeQuery(account: account, zone: "keychain", after: after, limit: 10, maximumBytes: bytes))
                else { return nil }
                return page
            }
            let first = try #require(try await page(after: 0, bytes: 100))
            #expect(first.items.map(\.item) == ["a", "b", "c"] && first.hasMore && first.cursor == 3)
            let rest = try #require(try await page(after: first.cursor, bytes: 100))
            #expect(rest.items.map(\.item) == ["d"] && !rest.hasMore && rest.cursor == 4)
            // Always at least one item, however small the budget.
            let one = try #require(try await page(after: 0, bytes: 1))
            #expect(one.items.map(\.item) == ["a"] && one.hasMore && one.cursor == 1)
        },
    ]
}

extension Fixture {
    /// A batch from device "d"; items are taken in the order of their IDs.
    static func batch(_ items: [String: [String: UInt64]], account: AccountID, cursor: UInt64 = 0) -> UploadBatch {
        UploadBatch(
            account: account, device: device("d"), zone: "keychain", cursor: cursor,
            items: items.sorted { $0.key < $1.key }.map { .init(key: ItemID($0.key), version: version($0.value)) })
    }

    /// The storage error `body` throws (recording an issue when it throws none).
    static func refusal(sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void) async throws -> SyncServerError? {
        do {
            try await body()
            Issue.record("expected a refusal, nothing was thrown", sourceLocation: sourceLocation)
            return nil
        } catch let error as SyncServerError {
            return error
        }
    }
}

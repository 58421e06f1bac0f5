import SyncCore
import Testing

/// The feed's decisions every storage shares (rules R6–R10a of docs/sync-rules.md); the storage
/// contract runs them on the memory, SQLite and PostgreSQL storages.
@Suite struct FeedRuleTests {
    @Test func aPullIsServedExpiredOrRestored() {
        func admit(
            _ after: UInt64, told: UInt64 = 0, full: Bool = false, mark: Bool = false, horizon: UInt64 = 10, restored: UInt64? = nil
        ) -> FeedRule.Admission {
            FeedRule.admission(after: after, told: told, fullResync: full, mustResync: mark, horizon: horizon, restoredThrough: restored)
        }
        #expect(admit(10) == .serve(startsResync: false))
        #expect(admit(9) == .expired)
        // A full resync's positions are not cursors: never expired by the horizon.
        #expect(admit(3, full: true) == .serve(startsResync: false))
        // A marked device is served only a full resync from 0, which clears the mark.
        #expect(admit(0, full: true, mark: true) == .serve(startsResync: true))
        #expect(admit(3, full: true, mark: true) == .expired)
        #expect(admit(50, mark: true) == .expired)
        // After a restore from a backup that ended at 20: a cursor ahead of it, below the jump.
        #expect(admit(25, restored: 20) == .restored(through: 20))
        #expect(admit(20, restored: 20) == .serve(startsResync: false))
        #expect(admit(20 + FeedRule.restoredSequenceJump, restored: 20) == .serve(startsResync: false))
        #expect(admit(25, full: true, restored: 20) == .serve(startsResync: false))
        // A cursor the backup covers, from a device told of a later sequence (its push past the
        // backup's end was answered, its pull after it was not): it saw what the restore lost.
        #expect(admit(15, told: 25, restored: 20) == .restored(through: 20))
        #expect(admit(15, told: 20, restored: 20) == .serve(startsResync: false))
        // Told of the restored account's sequences: its cursor past the jump, it was served since.
        #expect(admit(20 + FeedRule.restoredSequenceJump, told: 30 + FeedRule.restoredSequenceJump, restored: 20) == .serve(startsResync: false))
        #expect(admit(15, told: 25, full: true, restored: 20) == .serve(startsResync: false))
    }

    @Test func aPageHandsBackItsLastItemOrTheLatestSequence() {
        #expect(FeedRule.cursor(after: 4, lastItem: 7, hasMore: true, latest: 30) == 7)
        #expect(FeedRule.cursor(after: 4, lastItem: 7, hasMore: false, latest: 30) == 30)
        #expect(FeedRule.cursor(after: 40, lastItem: nil, hasMore: false, latest: 30) == 40)
    }

    @Test func collectedDeletionsMergeInSequenceOrderWithinTheLimit() {
        func item(_ name: String, _ sequence: UInt64) -> ChangedItem<SealedVersion> {
            ChangedItem(item: ItemID(name), sequence: sequence, versions: [SealedVersion(vector: VersionVector(), isDeleted: false, payload: [1])])
        }
        let items = [item("a", 1), item("c", 5)]
        let collected = [item("b", 3), item("d", 9)]
        let all = FeedRule.page(merging: items, hasMore: false, with: collected, limit: 10, maximumBytes: .max)
        #expect(all.items.map(\.item) == ["a", "b", "c", "d"] && !all.hasMore)
        let first = FeedRule.page(merging: items, hasMore: false, with: collected, limit: 2, maximumBytes: .max)
        #expect(first.items.map(\.item) == ["a", "b"] && first.hasMore)
        // A cut page of items: nothing collected past its last item.
        let cut = FeedRule.page(merging: items, hasMore: true, with: collected, limit: 10, maximumBytes: .max)
        #expect(cut.items.map(\.item) == ["a", "b", "c"] && cut.hasMore)
        // The byte budget: at least one item.
        #expect(FeedRule.page(merging: items, hasMore: false, with: collected, limit: 10, maximumBytes: 1).items.map(\.item) == ["a"])
        #expect(FeedRule.collectionTime(listsCollectedDeletions: true, collectedAt: 5, forgottenAt: nil) == nil)
        #expect(FeedRule.collectionTime(listsCollectedDeletions: false, collectedAt: 5, forgottenAt: nil) == 5)
    }
}

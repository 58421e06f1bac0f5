import SyncCore
import SyncServer
import Testing

/// What a feed answers after a restore (decision 0154), on a storage whose account was restored
/// from a backup that ended at sequence `through`, with sequences jumped on since: a cursor from
/// before the restore that is ahead of the backup, or a cursor the backup covers from a device told
/// of a sequence ahead of it, is answered `restored`; everything else as usual.
enum RestoredFeedChecks {
    static func check(_ storage: any ServerStorage, account: AccountID, through: UInt64, backedUp: [ItemID]) async throws {
        let jump = UInt64(ChangeFeed.restoredSequenceJump)
        for ahead in [through + 1, through + 50, through + jump - 1] {
            let answer = try await storage.changes(ChangeQuery(account: account, zone: "keychain", after: ahead, limit: 10))
            #expect(answer == .restored(through: through), "cursor \(ahead)")
            // A cursor the backup covers, from a device told of a sequence the restore lost (its
            // push past the backup's end was answered, its pull after it was not).
            let told = try await storage.changes(ChangeQuery(account: account, zone: "keychain", after: through, told: ahead, limit: 10))
            #expect(told == .restored(through: through), "told \(ahead)")
        }
        // A cursor the backup covers, a full resync and a cursor after the restore are served.
        #expect(try await Fixture.page(account: account, after: through, in: storage).items.isEmpty)
        #expect(try await Fixture.page(account: account, fullResync: true, in: storage).items.map(\.item) == backedUp)
        let resumed = try await Fixture.page(account: account, after: through + jump, in: storage)
        #expect(resumed.items.isEmpty && resumed.cursor == through + jump)
        // A write after the restore reaches the devices that resynced.
        _ = try await Fixture.upload(["after": ["d": 9]], account: account, cursor: through + jump, in: storage)
        #expect(try await Fixture.page(account: account, after: through + jump, in: storage).items.map(\.item) == ["after"])
    }
}

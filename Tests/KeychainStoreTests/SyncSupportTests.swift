import Foundation
import KeychainModel
import KeychainStore
import Testing

@Suite struct SyncSupportTests {
    func synced(_ account: String = "alice", secret: String = "s3cret") -> Item {
        password(account: account, secret: secret) {
            $0.synchronizable = true
            $0.accessGroup = ItemRules.defaultAccessGroup
        }
    }

    /// A shared group's keychain (decision 0295): what is added or imported there is
    /// synchronizable and journalled, a search finds it whatever its synchronizable filter, and a
    /// change may not make it local.
    @Test func everyItemOfASharedGroupsKeychainIsSynchronizable() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keychain-tests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let keychain = try openKeychain(in: directory, everyItemSynchronizable: true)
        try keychain.add(password(account: "added"))
        #expect(try keychain.importItems([password(account: "imported")], keepingDates: false).imported == 1)
        #expect(try keychain.sealedSynchronizableItems().count == 2)
        #expect(try keychain.journalEntries(after: 0).map(\.operation) == [.add, .add])
        #expect(try keychain.findData(query(account: "added")) == Array("s3cret".utf8))
        try keychain.update(query(account: "added"), changes: ItemAttributes(), data: [1])
        #expect(try keychain.findData(query(account: "added", sync: .yes)) == [1])
        var local = ItemAttributes()
        local.synchronizable = false
        #expect(status { try keychain.update(query(account: "added"), changes: local) } == .param)
        try keychain.delete(query(account: "imported"))
        #expect(try keychain.sealedSynchronizableItems().count == 1)
    }

    @Test func journalRecordsChangesToSynchronizableItemsOnly() throws {
        try withTemporaryKeychain { keychain, _ in
            try keychain.add(password(account: "local"))
            try keychain.add(synced())
            try keychain.update(query(sync: .yes), changes: ItemAttributes(), data: [1])
            try keychain.delete(query(sync: .yes))
            let entries = try keychain.journalEntries(after: 0)
            #expect(entries.map(\.operation) == [.add, .update, .delete])
            #expect(entries.map(\.sequence) == entries.map(\.sequence).sorted())
            #expect(Set(entries.map(\.sequence)).count == 3)
            #expect(entries.allSatisfy { $0.primaryKey == self.synced().primaryKey })
            #expect(Set(entries.map(\.itemIdentity)).count == 1)
            #expect(try keychain.journalEntries(after: entries[1].sequence).map(\.operation) == [.delete])
        }
    }

    /// A first sync reads every item after the journal's head: the entries up to it of an item
    /// still held are left out, those of an item gone since (its deletion to take) and every later
    /// one are not.
    @Test func entriesOfItemsStillHeldAreLeftOutUpToAPosition() throws {
        try withTemporaryKeychain { keychain, _ in
            try keychain.add(synced("kept"))
            try keychain.add(synced("gone"))
            try keychain.add(password(account: "local"))
            let head = try keychain.latestJournalSequence()
            try keychain.delete(query(account: "gone", sync: .yes))
            try keychain.update(query(account: "kept", sync: .yes), changes: ItemAttributes(), data: [1])
            let entries = try keychain.journalEntries(after: 0, omittingHeldUpTo: head)
            #expect(entries.map(\.operation) == [.add, .delete, .update])
            #expect(entries.map(\.primaryKey) == [synced("gone").primaryKey, synced("gone").primaryKey, synced("kept").primaryKey])
            #expect(try keychain.journalEntries(after: 0).count == 4)
        }
    }

    @Test func primaryKeyChangeJournalsDeleteAndAdd() throws {
        try withTemporaryKeychain { keychain, _ in
            try keychain.add(synced("a"))
            var changes = ItemAttributes()
            changes.account = "b"
            try keychain.update(query(account: "a", sync: .yes), changes: changes)
            let entries = try keychain.journalEntries(after: 0)
            #expect(entries.map(\.operation) == [.add, .delete, .add])
            #expect(entries[1].primaryKey == synced("a").primaryKey && entries[2].primaryKey == synced("b").primaryKey)
        }
    }

    @Test func remoteVersionsAreAppliedWithoutJournal() throws {
        try withTemporaryKeychain { keychain, _ in
            var remote = synced(secret: "remote")
            remote.attributes.modificationDate = Date(timeIntervalSince1970: 1_000)
            try keychain.applyRemoteVersion(remote)
            let fetched = try #require(try keychain.item(withPrimaryKey: remote.primaryKey))
            #expect(fetched.data == Array("remote".utf8))
            #expect(fetched.attributes.modificationDate == Date(timeIntervalSince1970: 1_000))
            try keychain.applyRemoteVersion(synced(secret: "newer"))
            #expect(try keychain.item(withPrimaryKey: remote.primaryKey)?.data == Array("newer".utf8))
            try keychain.applyRemoteDeletion(of: remote.primaryKey)
            #expect(try keychain.item(withPrimaryKey: remote.primaryKey) == nil)
            #expect(try keychain.journalEntries(after: 0).isEmpty)
            #expect(status { try keychain.applyRemoteVersion(password()) } == .param)
        }
    }

    @Test func historyKeepsLostVersionsAndRestoresThem() throws {
        try withTemporaryKeychain { keychain, _ in
            try keychain.add(synced(secret: "winner"))
            try keychain.recordHistoryVersion(synced(secret: "loser"))
            let versions = try keychain.historyVersions(of: synced().primaryKey)
            #expect(versions.count == 1)
            #expect(versions[0].item.data == nil)
            try keychain.restoreHistoryVersion(versions[0].id)
            #expect(try keychain.findData(query(sync: .yes)) == Array("loser".utf8))
            let afterRestore = try keychain.historyVersions(of: synced().primaryKey)
            #expect(afterRestore.count == 1)
            try keychain.restoreHistoryVersion(afterRestore[0].id)
            #expect(try keychain.findData(query(sync: .yes)) == Array("winner".utf8))
            #expect(try keychain.journalEntries(after: 0).map(\.operation) == [.add, .update, .update])
            #expect(status { try keychain.restoreHistoryVersion(9999) } == .itemNotFound)
        }
    }
}

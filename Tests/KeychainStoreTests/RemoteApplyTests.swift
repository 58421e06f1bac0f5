import Foundation
import GRDB
import KeychainModel
import KeychainStore
import Testing

@Suite struct RemoteApplyTests {
    func synced(_ account: String, secret: String = "s3cret", configure: (inout ItemAttributes) -> Void = { _ in }) -> Item {
        password(account: account, secret: secret) {
            $0.synchronizable = true
            $0.accessGroup = ItemRules.defaultAccessGroup
            configure(&$0)
        }
    }

    func secret(_ keychain: Keychain, _ account: String) throws -> String? {
        try keychain.item(withPrimaryKey: synced(account).primaryKey)?.data.map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func aPageOfChangesIsAppliedTogetherWithoutJournal() throws {
        try withTemporaryKeychain { keychain, _ in
            try keychain.applyRemote([.store(synced("gone")), .store(synced("kept", secret: "old"))])
            let outcome = try keychain.applyRemote(
                (0..<300).map { .store(synced("item\($0)", secret: "secret\($0)")) }
                    + [.store(synced("kept", secret: "new")), .delete(synced("gone").primaryKey), .delete(synced("absent").primaryKey),
                       .keepInHistory(synced("kept", secret: "old"), versionTag: [1, 2])],
                basedOnJournal: 0)
            #expect(outcome == .applied)
            #expect(try secret(keychain, "item299") == "secret299")
            #expect(try secret(keychain, "kept") == "new")
            #expect(try secret(keychain, "gone") == nil)
            #expect(try keychain.historyVersions(of: synced("kept").primaryKey, includingData: true).map(\.item.data) == [Array("old".utf8)])
            #expect(try keychain.journalEntries(after: 0).isEmpty)
        }
    }

    @Test func aFailingChangeLeavesTheWholePageUnapplied() throws {
        try withTemporaryKeychain { keychain, _ in
            try keychain.lock()
            let always = synced("always") { $0.accessible = .always }
            let whenUnlocked = synced("locked")
            #expect(status { try keychain.applyRemote([.store(always), .store(whenUnlocked)]) } == .interactionNotAllowed)
            try keychain.unlock(passcode: nil)
            #expect(try keychain.item(withPrimaryKey: always.primaryKey) == nil)
            #expect(status { try keychain.applyRemote([.store(synced("a")), .store(password(account: "local"))]) } == .param)
            #expect(try secret(keychain, "a") == nil)
        }
    }

    @Test func aLocalChangeAfterTheJournalPositionIsNeverOverwritten() throws {
        try withTemporaryKeychain { keychain, _ in
            try keychain.add(synced("raced", secret: "local"))
            try keychain.add(synced("other", secret: "local"))
            let position = try #require(try keychain.journalEntries(after: 0).last?.sequence)
            // The user edits after the engine read the journal up to `position`.
            try keychain.update(query(account: "raced", sync: .yes), changes: ItemAttributes(), data: Array("newer local".utf8))
            let page: [RemoteChange] = [.store(synced("fresh", secret: "remote")), .store(synced("raced", secret: "remote"))]
            #expect(try keychain.applyRemote(page, basedOnJournal: position) == .changedLocally([synced("raced").primaryKey]))
            #expect(try secret(keychain, "raced") == "newer local")
            #expect(try secret(keychain, "fresh") == nil)
            // A deletion racing the same way is refused too; a page that touches other items applies.
            #expect(try keychain.applyRemote([.delete(synced("raced").primaryKey)], basedOnJournal: position) != .applied)
            #expect(try keychain.applyRemote([.store(synced("other", secret: "remote"))], basedOnJournal: position) == .applied)
            #expect(try secret(keychain, "other") == "remote")
            let latest = try #require(try keychain.journalEntries(after: 0).last?.sequence)
            #expect(try keychain.applyRemote(page, basedOnJournal: latest) == .applied)
            #expect(try secret(keychain, "raced") == "remote")
        }
    }

    @Test func aReplayedResolutionKeepsTheLosingVersionOnce() throws {
        try withTemporaryKeychain { keychain, _ in
            let loser = synced("item", secret: "loser")
            for _ in 0..<3 {
                try keychain.applyRemote([.store(synced("item", secret: "winner")), .keepInHistory(loser, versionTag: [7])])
            }
            try keychain.recordHistoryVersion(synced("item", secret: "other loser"), versionTag: [8])
            try keychain.recordHistoryVersion(synced("item", secret: "other loser"), versionTag: [8])
            let versions = try keychain.historyVersions(of: loser.primaryKey, includingData: true)
            #expect(versions.map(\.item.data) == [Array("loser".utf8), Array("other loser".utf8)])
            // The same tag under another item is another version.
            try keychain.applyRemote([.keepInHistory(synced("another", secret: "x"), versionTag: [7])])
            #expect(try keychain.historyVersions(of: synced("another").primaryKey).count == 1)
        }
    }

    @Test func historyDataNeedsTheClassUnlockedAndStaysOutOfPlainListings() throws {
        try withTemporaryKeychain { keychain, _ in
            try keychain.recordHistoryVersion(synced("item", secret: "old"), versionTag: [1])
            #expect(try keychain.historyVersions(of: synced("item").primaryKey).first?.item.data == nil)
            try keychain.lock()
            #expect(status { try keychain.historyVersions(of: synced("item").primaryKey, includingData: true) } == .interactionNotAllowed)
            #expect(try keychain.historyVersions(of: synced("item").primaryKey).count == 1)
        }
    }
}

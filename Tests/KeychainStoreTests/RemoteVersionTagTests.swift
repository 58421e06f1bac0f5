import Foundation
import KeychainModel
import KeychainStore
import Testing

/// The version a sync apply leaves each item at is recorded in the apply's own transaction, for
/// its owner only, and not at all when the apply is refused (decision 0107).
@Suite struct RemoteVersionTagTests {
    let apply = RemoteApplyTests()

    @Test func anApplyRecordsTheVersionOfEachWrittenItemForItsOwner() throws {
        try withTemporaryKeychain { keychain, _ in
            let kept = apply.synced("kept"), gone = apply.synced("gone")
            try keychain.applyRemote([.store(kept), .store(gone)], versions: RemoteVersionTags(owner: "dev-a", tags: [kept.primaryKey: [1], gone.primaryKey: [2]]))
            try keychain.applyRemote([.delete(gone.primaryKey)], versions: RemoteVersionTags(owner: "dev-a", tags: [gone.primaryKey: [3]]))
            #expect(try keychain.remoteVersionTag(of: kept.primaryKey, owner: "dev-a") == [1])
            // A deletion's version stays recorded after the item is gone.
            #expect(try keychain.remoteVersionTag(of: gone.primaryKey, owner: "dev-a") == [3])
            // Another enrolment's state does not read them.
            #expect(try keychain.remoteVersionTag(of: kept.primaryKey, owner: "dev-b") == nil)
            try keychain.applyRemote([.store(kept)], versions: RemoteVersionTags(owner: "dev-b", tags: [kept.primaryKey: [9]]))
            #expect(try keychain.remoteVersionTag(of: kept.primaryKey, owner: "dev-a") == nil)
            #expect(try keychain.remoteVersionTag(of: kept.primaryKey, owner: "dev-b") == [9])
        }
    }

    /// Decision 0243: the server's version an item holds exactly is recorded with its tag, for a
    /// device back without its sync state; a pushed version is one, a local write since is not.
    @Test func theServersVersionOfAnUnchangedItemIsRecorded() throws {
        try withTemporaryKeychain { keychain, _ in
            let pulled = apply.synced("pulled"), resolved = apply.synced("resolved"), pushed = apply.synced("pushed")
            try keychain.add(pushed)
            let position = try #require(try keychain.journalEntries(after: 0).last?.sequence)
            try keychain.applyRemote(
                [.store(pulled), .store(resolved)], basedOnJournal: position,
                versions: RemoteVersionTags(owner: "dev", tags: [pulled.primaryKey: [1], resolved.primaryKey: [2]], serverVersions: [pulled.primaryKey: [7]]))
            try keychain.applyRemote([], basedOnJournal: position, versions: RemoteVersionTags(owner: "dev", tags: [:], pushed: [pushed.primaryKey: [3]]))
            #expect(try keychain.unchangedRemoteVersions().compactMapValues(\.serverVersion) == [pulled.primaryKey: [7], pushed.primaryKey: [3]])
            try keychain.update(query(account: "pulled", sync: .yes), changes: ItemAttributes(), data: Array("changed".utf8))
            #expect(try keychain.unchangedRemoteVersions().compactMapValues(\.serverVersion) == [pushed.primaryKey: [3]])
        }
    }

    /// Decision 0247: a version about to be pushed is recorded as sent, unless journaled after the
    /// position; its acknowledgement replaces the record with the server's version.
    @Test func aVersionAboutToBePushedIsRecordedAsSent() throws {
        try withTemporaryKeychain { keychain, _ in
            let sent = apply.synced("sent"), raced = apply.synced("raced")
            try keychain.add(sent)
            try keychain.add(raced)
            let position = try #require(try keychain.journalEntries(after: 0).last?.sequence)
            try keychain.update(query(account: "raced", sync: .yes), changes: ItemAttributes(), data: Array("newer".utf8))
            let versions = RemoteVersionTags(owner: "dev", tags: [:], sent: [
                sent.primaryKey: .init(tag: [4], version: [40]), raced.primaryKey: .init(tag: [5], version: [50]),
            ])
            try keychain.applyRemote([], basedOnJournal: position, versions: versions)
            let unchanged = try keychain.unchangedRemoteVersions()
            #expect(unchanged[sent.primaryKey] == UnchangedRemoteVersion(tag: [4], serverVersion: nil, sentVersion: [40]))
            #expect(unchanged[raced.primaryKey] == nil)
            try keychain.applyRemote([], basedOnJournal: position, versions: RemoteVersionTags(owner: "dev", tags: [:], pushed: [sent.primaryKey: [4]]))
            #expect(try keychain.unchangedRemoteVersions()[sent.primaryKey] == UnchangedRemoteVersion(tag: [4], serverVersion: [4], sentVersion: nil))
        }
    }

    @Test func aRefusedOrFailedApplyRecordsNothing() throws {
        try withTemporaryKeychain { keychain, _ in
            try keychain.add(apply.synced("raced", secret: "local"))
            let position = try #require(try keychain.journalEntries(after: 0).last?.sequence)
            try keychain.update(query(account: "raced", sync: .yes), changes: ItemAttributes(), data: Array("newer".utf8))
            let raced = apply.synced("raced", secret: "remote")
            let outcome = try keychain.applyRemote([.store(raced)], basedOnJournal: position, versions: RemoteVersionTags(owner: "dev", tags: [raced.primaryKey: [5]]))
            #expect(outcome != .applied)
            #expect(try keychain.remoteVersionTag(of: raced.primaryKey, owner: "dev") == nil)
            let fine = apply.synced("fine")
            let local = password(account: "local")
            #expect(status { try keychain.applyRemote([.store(fine), .store(local)], versions: RemoteVersionTags(owner: "dev", tags: [fine.primaryKey: [6]])) } == .param)
            #expect(try keychain.remoteVersionTag(of: fine.primaryKey, owner: "dev") == nil)
        }
    }
}

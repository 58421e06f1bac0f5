import Foundation
import GRDB
import KeychainModel
import KeychainStore
import Testing

/// Item metadata sealed at rest (decision 0280): a copy of the keychain's files shows no attribute
/// value, every lookup still finds what it found, and a file of the previous schema is migrated in
/// place, in one transaction.
@Suite struct SealedMetadataTests {
    /// Every file in `directory` that holds `needle`.
    func filesContaining(_ needle: String, in directory: URL) throws -> [String] {
        try FileManager.default.subpathsOfDirectory(atPath: directory.path).filter { name in
            var isDirectory: ObjCBool = false
            let path = directory.appendingPathComponent(name).path
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { return false }
            return try Data(contentsOf: URL(fileURLWithPath: path)).range(of: Data(needle.utf8)) != nil
        }
    }

    /// A value no file could hold by chance.
    func marked(_ name: String) -> String { "SEALED-\(name)-\(UUID().uuidString)" }

    @Test func aCopyOfTheKeychainFilesShowsNoAttributeValue() throws {
        try withTemporaryKeychain { keychain, directory in
            var values: [String] = []
            func value(_ name: String) -> String {
                let value = marked(name)
                values.append(value)
                return value
            }
            var generic = Item.genericPassword(service: value("service"), account: value("account"), data: Array("s".utf8)) {
                $0.label = value("label")
                $0.comment = value("comment")
                $0.itemDescription = value("description")
                $0.generic = Array(value("generic").utf8)
                $0.accessGroup = value("group")
                $0.synchronizable = true
            }
            try keychain.add(generic)
            var internet = ItemAttributes()
            internet.server = value("server")
            internet.account = value("internet-account")
            internet.path = value("path")
            internet.securityDomain = value("domain")
            internet.authenticationType = value("auth")
            internet.synchronizable = true
            try keychain.add(Item(itemClass: .internetPassword, attributes: internet, data: Array("s".utf8)))
            var certificate = ItemAttributes()
            certificate[.issuer] = .data(Array(value("issuer").utf8))
            certificate[.serialNumber] = .data(Array(value("serial").utf8))
            certificate[.subject] = .data(Array(value("subject").utf8))
            try keychain.add(Item(itemClass: .certificate, attributes: certificate, data: Array("c".utf8)))
            var key = ItemAttributes()
            key[.applicationTag] = .data(Array(value("tag").utf8))
            key[.applicationLabel] = .data(Array(value("key-label").utf8))
            try keychain.add(Item(itemClass: .key, attributes: key, data: Array("k".utf8)))
            // The journal (an update, a deletion), the history and the remote versions hold keys too.
            var byService = ItemAttributes()
            byService.service = generic.attributes.service
            try keychain.update(Query(itemClass: .genericPassword, attributes: byService, synchronizable: .any), changes: ItemAttributes(), data: Array("t".utf8))
            generic.attributes.label = value("history-label")
            try keychain.recordHistoryVersion(generic, versionTag: [1])
            let remote = Item.genericPassword(service: value("remote-service"), account: value("remote-account"), data: Array("r".utf8)) {
                $0.synchronizable = true
                $0.accessGroup = "default"
            }
            try keychain.applyRemote([.store(remote)], versions: RemoteVersionTags(owner: "device", tags: [remote.primaryKey: [1]]))
            let gone = Item.genericPassword(service: value("deleted-service"), account: value("deleted-account"), data: Array("d".utf8)) {
                $0.synchronizable = true
                $0.accessGroup = "default"
            }
            try keychain.add(gone)
            try keychain.delete(gone.primaryKey.exactQuery())

            for value in values {
                #expect(try filesContaining(value, in: directory).isEmpty, "\(value) is in the keychain's files")
            }
            // The search itself finds what is stored in the clear: the item class codes.
            #expect(!(try filesContaining("genp", in: directory)).isEmpty)
            // And the sealed values still come back.
            #expect(try keychain.journalEntries(after: 0).map(\.primaryKey).contains(gone.primaryKey))
            #expect(try keychain.historyVersions(of: generic.primaryKey).map(\.item.attributes.label) == [generic.attributes.label])
            #expect(try keychain.unchangedRemoteVersionTags() == [remote.primaryKey: [1]])
        }
    }

    func attributes(service: String? = nil, account: String? = nil, label: String? = nil, accessGroup: String? = nil) -> ItemAttributes {
        var attributes = ItemAttributes()
        attributes.service = service
        attributes.account = account
        attributes.label = label
        attributes.accessGroup = accessGroup
        return attributes
    }

    /// The accounts of the generic passwords a query finds, sorted; none when nothing matches.
    func accounts(_ keychain: Keychain, _ attributes: ItemAttributes, sync: SynchronizableMatch = .any, limit: MatchLimit = .all,
                  excluding groups: [String] = []) throws -> [String] {
        var query = Query(itemClass: .genericPassword, attributes: attributes, synchronizable: sync, limit: limit, returns: .attributes)
        query.excludedAccessGroups = groups
        let found: [ItemResult]
        do {
            found = try keychain.find(query)
        } catch {
            guard error.code == .itemNotFound else { throw error }
            found = []
        }
        return found.compactMap(\.attributes?.account).sorted()
    }

    @Test func everyLookupFindsByAnyAttributeWithAndWithoutAnIndex() throws {
        try withTemporaryKeychain { keychain, _ in
            for index in 0..<6 {
                try keychain.add(password(service: "svc\(index % 2)", account: "acct\(index)") {
                    $0.label = "label\(index % 3)"
                    $0.synchronizable = index % 2 == 0
                })
            }
            // The key index (every key attribute but synchronizable), the service and account's
            // index, the service's, none.
            #expect(try accounts(keychain, attributes(service: "svc1", account: "acct3", accessGroup: "default")) == ["acct3"])
            #expect(try accounts(keychain, attributes(service: "svc0", account: "acct2", accessGroup: "default"), sync: .no) == [])
            #expect(try accounts(keychain, attributes(service: "svc1", account: "acct3")) == ["acct3"])
            #expect(try accounts(keychain, attributes(service: "svc1", account: "acct2")) == [])
            #expect(try accounts(keychain, attributes(service: "svc0")) == ["acct0", "acct2", "acct4"])
            #expect(try accounts(keychain, attributes(service: "svc1", label: "label0")) == ["acct3"])
            #expect(try accounts(keychain, attributes(label: "label1")) == ["acct1", "acct4"])
            #expect(try accounts(keychain, attributes(label: "label1"), sync: .yes) == ["acct4"])
            #expect(try accounts(keychain, attributes(account: "acct5")) == ["acct5"])
            #expect(try accounts(keychain, attributes(label: "label2"), limit: .one).count == 1)
            #expect(try accounts(keychain, attributes(service: "svc0"), excluding: ["default"]) == [])
            #expect(try accounts(keychain, attributes(label: "none")) == [])
            // Uniqueness still holds whatever the other attributes.
            #expect(status { try keychain.add(password(service: "svc1", account: "acct1") { $0.label = "other" }) } == .duplicateItem)
        }
    }

    /// The fixture is a keychain written by the schema-7 build (commit 670f8ca): two devices of one
    /// account synced through a server, a conflict whose losing version went to the history, an
    /// internet password deleted, a pending add, a local item; then checkpointed.
    static let schema7 = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/schema-7")

    /// A copy of the schema-7 fixture in a new temporary directory, laid out as ``openKeychain(in:)`` opens it.
    func copyOfSchema7() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keychain-tests-\(UUID().uuidString)")
        let keychain = directory.appendingPathComponent("keychain")
        try FileManager.default.createDirectory(at: keychain, withIntermediateDirectories: true)
        for name in ["keychain.db", "keychain.db.devicekey"] {
            try FileManager.default.copyItem(at: Self.schema7.appendingPathComponent(name), to: keychain.appendingPathComponent(name))
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keychain.appendingPathComponent(name).path)
        }
        return directory
    }

    static let fixtureValues = [
        "fixture-alice", "fixture-mail.example.com", "Fixture Mail Label", "fixture comment text", "fixture-bob",
        "fixture-local.example.com", "fixture-carol", "fixture-shop.example.org", "/fixture/path", "fixture-dave",
        "fixture-pending.example.net", "Fixture Pending Label",
    ]

    @Test func aSchema7KeychainIsMigratedInPlaceAndKeepsEverything() throws {
        let directory = try copyOfSchema7()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("keychain/keychain.db").path
        // What the old build stored, read before the migration.
        let (rowIDs, journalSequence) = try DatabaseQueue(path: path).read { db in
            (try Dictionary(uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT acct, id FROM item").map { ($0[0] as String, $0[1] as Int64) }),
             try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'change_journal'") ?? 0)
        }
        #expect(journalSequence == 5)
        let fixtureValues = Self.fixtureValues
        #expect(try fixtureValues.allSatisfy { try !filesContaining($0, in: directory).isEmpty }, "the fixture holds its values in the clear")

        let keychain = try openKeychain(in: directory)
        func synced(_ service: String, _ account: String) -> PrimaryKey {
            var attributes = ItemAttributes()
            attributes.service = service
            attributes.account = account
            attributes.accessGroup = "default"
            attributes.synchronizable = true
            return PrimaryKey(itemClass: .genericPassword, attributes: attributes)
        }
        let alice = synced("fixture-mail.example.com", "fixture-alice")
        #expect(try keychain.item(withPrimaryKey: alice)?.data == Array("fixture-secret-from-a".utf8))
        #expect(try keychain.item(withPrimaryKey: alice)?.attributes.comment == "fixture comment text")
        #expect(try keychain.historyVersions(of: alice, includingData: true).map(\.item.data) == [Array("fixture-secret-from-b".utf8)])
        #expect(try keychain.historyCount(of: alice) == 1)
        let journal = try keychain.journalEntries(after: 0)
        #expect(journal.map(\.sequence) == [1, 2, 3, 4, 5])
        #expect(journal.map(\.operation) == [.add, .add, .update, .delete, .add])
        #expect(journal.last?.primaryKey == synced("fixture-pending.example.net", "fixture-dave"))
        #expect(journal[3].primaryKey.itemClass == .internetPassword)
        #expect(try keychain.remoteVersionTags(owner: "2f9ac61bf34a7a8723ce1e8a292fb0d0").count == 2)
        #expect(Set(try keychain.unchangedRemoteVersionTags().keys) == [alice])
        // Lookups by any attribute, and persistent references kept (rows keep their IDs).
        var byLabel = ItemAttributes()
        byLabel.label = "Fixture Local Label"
        let local = try keychain.find(Query(itemClass: .genericPassword, attributes: byLabel, returns: [.data, .persistentReference]))
        #expect(local.map(\.data) == [Array("fixture-secret-2".utf8)])
        #expect(local.first?.persistentReference?.rowID == rowIDs["fixture-bob"])
        #expect(status { try keychain.findData(query(service: "fixture-shop.example.org", account: "fixture-carol", sync: .any)) } == .itemNotFound)
        // A new change continues the journal's sequence; the history's rule (one per tag) holds.
        try keychain.add(password(service: "after", account: "migration") { $0.synchronizable = true })
        #expect(try keychain.journalEntries(after: 5).map(\.sequence) == [6])
        try keychain.recordHistoryVersion(Item(itemClass: .genericPassword, attributes: alice.attributes, data: [1]), versionTag: [9])
        try keychain.recordHistoryVersion(Item(itemClass: .genericPassword, attributes: alice.attributes, data: [1]), versionTag: [9])
        #expect(try keychain.historyCount(of: alice) == 2)

        for value in fixtureValues {
            #expect(try filesContaining(value, in: directory).isEmpty, "\(value) is still in the keychain's files after the migration")
        }
        let userVersion = try DatabaseQueue(path: path).read { db in try Int.fetchOne(db, sql: "PRAGMA user_version") }
        #expect(userVersion == 8)
    }

    @Test func aMigrationThatCannotCompleteLeavesTheFileAsItWas() throws {
        let directory = try copyOfSchema7()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("keychain/keychain.db").path
        // A journal entry whose primary key no build could have written: the migration stops there.
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "UPDATE change_journal SET primary_key = x'00ff' WHERE sequence = 5")
        }
        #expect(status { try openKeychain(in: directory) } == .decode)
        let (userVersion, items, journal) = try DatabaseQueue(path: path).read { db in
            (try Int.fetchOne(db, sql: "PRAGMA user_version"), try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item WHERE svce LIKE 'fixture-%'"),
             try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM change_journal"))
        }
        #expect(userVersion == 7 && items == 3 && journal == 5)
    }

    /// A keychain of the first schema (the fixture taken back to version 1) goes through every migration.
    @Test func aVersionOneKeychainIsMigratedAndItsHistoryKept() throws {
        let directory = try copyOfSchema7()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("keychain/keychain.db").path
        try DatabaseQueue(path: path).writeWithoutTransaction { db in
            try db.execute(sql: """
                DROP TABLE remote_version;
                DROP TABLE remote_apply;
                DROP INDEX item_history_by_version;
                ALTER TABLE item_history DROP COLUMN version_tag;
                DELETE FROM grdb_migrations WHERE identifier != 'v1';
                PRAGMA user_version = 1;
                """)
        }
        let keychain = try openKeychain(in: directory)
        var attributes = ItemAttributes()
        attributes.service = "fixture-mail.example.com"
        attributes.account = "fixture-alice"
        attributes.accessGroup = "default"
        attributes.synchronizable = true
        let alice = Item(itemClass: .genericPassword, attributes: attributes, data: Array("kept".utf8))
        #expect(try keychain.historyVersions(of: alice.primaryKey, includingData: true).map(\.item.data) == [Array("fixture-secret-from-b".utf8)])
        try keychain.recordHistoryVersion(alice, versionTag: [1])
        try keychain.recordHistoryVersion(alice, versionTag: [1])
        #expect(try keychain.historyCount(of: alice.primaryKey) == 2)
        #expect(try keychain.hasRemoteVersionTags() == false)
        let userVersion = try DatabaseQueue(path: path).read { db in try Int.fetchOne(db, sql: "PRAGMA user_version") }
        #expect(userVersion == 8)
    }
}

import Foundation
import KeychainModel
import KeychainStore
import Testing

@Suite struct ItemSemanticsTests {
    @Test func addedSecretIsFoundAgain() throws {
        try withTemporaryKeychain { keychain, _ in
            try keychain.add(password())
            #expect(try keychain.findData(query()) == Array("s3cret".utf8))
        }
    }

    @Test func sameKeyTwiceIsADuplicate() throws {
        try withTemporaryKeychain { keychain, _ in
            try keychain.add(password())
            #expect(status { try keychain.add(password(secret: "other") { $0.label = "different label" }) } == .duplicateItem)
        }
    }

    @Test func itemsWithoutAccountCollide() throws {
        try withTemporaryKeychain { keychain, _ in
            try keychain.add(Item(itemClass: .genericPassword, attributes: ItemAttributes([.service: .string("s")])))
            let again = Item(itemClass: .genericPassword, attributes: ItemAttributes([.service: .string("s"), .account: .string("")]))
            #expect(status { try keychain.add(again) } == .duplicateItem)
        }
    }

    @Test func synchronizableAndLocalItemsCoexist() throws {
        try withTemporaryKeychain { keychain, _ in
            try keychain.add(password(secret: "local"))
            try keychain.add(password(secret: "synced") { $0.synchronizable = true })
            #expect(try keychain.findData(query(sync: .no)) == Array("local".utf8))
            #expect(try keychain.findData(query(sync: .yes)) == Array("synced".utf8))
            #expect(try keychain.find(query(sync: .any, limit: .all)).count == 2)
        }
    }

    @Test func queryWithoutSynchronizableSkipsSynchronizableItems() throws {
        try withTemporaryKeychain { keychain, _ in
            try keychain.add(password { $0.synchronizable = true })
            #expect(status { try keychain.find(query()) } == .itemNotFound)
            #expect(try keychain.find(query(sync: .any)).count == 1)
        }
    }

    @Test func matchLimitOneAllAndCount() throws {
        try withTemporaryKeychain { keychain, _ in
            for account in ["a", "b", "c"] { try keychain.add(password(account: account)) }
            #expect(try keychain.find(query(account: nil)).count == 1)
            #expect(try keychain.find(query(account: nil, limit: .all)).count == 3)
            #expect(try keychain.find(query(account: nil, limit: .count(2))).count == 2)
        }
    }

    @Test func returnTypesCombine() throws {
        try withTemporaryKeychain { keychain, _ in
            try keychain.add(password { $0.label = "Mail" })
            let attributesOnly = try keychain.find(query(returns: .attributes))[0]
            #expect(attributesOnly.data == nil && attributesOnly.attributes?.label == "Mail")
            #expect(attributesOnly.attributes?.creationDate != nil)
            let all = try keychain.find(query(returns: [.data, .attributes, .persistentReference]))[0]
            #expect(all.data == Array("s3cret".utf8) && all.attributes?.account == "alice")
            let reference = try #require(all.persistentReference)
            let byReference = Query(itemClass: .genericPassword, returns: .data, persistentReference: reference)
            #expect(try keychain.findData(byReference) == Array("s3cret".utf8))
            let nothing = try keychain.find(query(returns: []))[0]
            #expect(nothing.data == nil && nothing.attributes == nil)
        }
    }

    @Test func updateChangesEveryMatchInOneTransaction() throws {
        try withTemporaryKeychain { keychain, _ in
            for account in ["a", "b"] { try keychain.add(password(account: account)) }
            var changes = ItemAttributes()
            changes.comment = "rotated"
            try keychain.update(query(account: nil), changes: changes, data: Array("new".utf8))
            let results = try keychain.find(query(account: nil, limit: .all, returns: [.data, .attributes]))
            #expect(results.count == 2)
            #expect(results.allSatisfy { $0.data == Array("new".utf8) && $0.attributes?.comment == "rotated" })
        }
    }

    @Test func updateOntoAnExistingKeyIsADuplicateAndChangesNothing() throws {
        try withTemporaryKeychain { keychain, _ in
            try keychain.add(password(account: "a", secret: "one"))
            try keychain.add(password(account: "b", secret: "two"))
            var changes = ItemAttributes()
            changes.account = "b"
            #expect(status { try keychain.update(query(account: "a"), changes: changes, data: Array("x".utf8)) } == .duplicateItem)
            #expect(try keychain.findData(query(account: "a")) == Array("one".utf8))
            #expect(try keychain.findData(query(account: "b")) == Array("two".utf8))
        }
    }

    @Test func updateAndDeleteOfNothingAreNotFound() throws {
        try withTemporaryKeychain { keychain, _ in
            #expect(status { try keychain.update(query(), changes: ItemAttributes(), data: [1]) } == .itemNotFound)
            #expect(status { try keychain.delete(query()) } == .itemNotFound)
        }
    }

    @Test func deleteRemovesEveryMatch() throws {
        try withTemporaryKeychain { keychain, _ in
            for account in ["a", "b"] { try keychain.add(password(account: account)) }
            try keychain.add(password(service: "other"))
            try keychain.delete(query(account: nil, limit: .all))
            #expect(status { try keychain.find(query(account: nil)) } == .itemNotFound)
            #expect(try keychain.find(query(service: "other")).count == 1)
        }
    }

    @Test func accessibilityChangeKeepsTheSecretReadable() throws {
        try withTemporaryKeychain { keychain, _ in
            try keychain.add(password())
            var changes = ItemAttributes()
            changes.accessible = .always
            try keychain.update(query(), changes: changes)
            #expect(try keychain.findData(query()) == Array("s3cret".utf8))
            #expect(try keychain.find(query(returns: .attributes))[0].attributes?.accessible == .always)
        }
    }

    @Test func thisDeviceOnlySynchronizableIsRefused() throws {
        try withTemporaryKeychain { keychain, _ in
            let item = password {
                $0.synchronizable = true
                $0.accessible = .whenUnlockedThisDeviceOnly
            }
            #expect(status { try keychain.add(item) } == .param)
        }
    }

    @Test func internetPasswordKeyIncludesPortAndProtocol() throws {
        try withTemporaryKeychain { keychain, _ in
            func site(port: Int64, secret: String) -> Item {
                var attributes = ItemAttributes()
                attributes.server = "example.com"
                attributes.account = "bob"
                attributes.protocol = "htps"
                attributes.port = port
                return Item(itemClass: .internetPassword, attributes: attributes, data: Array(secret.utf8))
            }
            try keychain.add(site(port: 443, secret: "a"))
            try keychain.add(site(port: 8443, secret: "b"))
            #expect(status { try keychain.add(site(port: 443, secret: "c")) } == .duplicateItem)
            var filters = ItemAttributes()
            filters.port = 8443
            #expect(try keychain.findData(Query(itemClass: .internetPassword, attributes: filters)) == Array("b".utf8))
        }
    }

    @Test func certificatesAndKeysStoreOpaqueDataUnderTheirOwnKeys() throws {
        try withTemporaryKeychain { keychain, _ in
            let certificate = Item(
                itemClass: .certificate,
                attributes: ItemAttributes([.issuer: .data([1, 2]), .serialNumber: .data([3]), .certificateType: .integer(3)]),
                data: [0x30, 0x82])
            try keychain.add(certificate)
            #expect(status { try keychain.add(certificate) } == .duplicateItem)
            let key = Item(itemClass: .key, attributes: ItemAttributes([.applicationTag: .data(Array("tag".utf8))]), data: [9, 9])
            try keychain.add(key)
            #expect(try keychain.findData(Query(itemClass: .key, attributes: ItemAttributes([.applicationTag: .data(Array("tag".utf8))]))) == [9, 9])
            #expect(try keychain.findData(Query(itemClass: .certificate)) == [0x30, 0x82])
            #expect(status { try keychain.add(Item(itemClass: .key, attributes: ItemAttributes([.account: .string("x")]))) } == .noSuchAttribute)
        }
    }

    @Test func storeSetsDates() throws {
        let clock = Date(timeIntervalSince1970: 1_800_000_000)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keychain-tests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let keychain = try Keychain.open(at: directory.appendingPathComponent("k.db").path, configuration: .init(now: { clock }))
        let stored = try keychain.add(password())
        #expect(stored.creationDate == clock && stored.modificationDate == clock)
    }
}

import KeychainModel
import Testing

@Suite struct PrimaryKeyTests {
    func genericPassword(_ configure: (inout ItemAttributes) -> Void) -> PrimaryKey {
        var attributes = ItemAttributes()
        configure(&attributes)
        return PrimaryKey(itemClass: .genericPassword, attributes: attributes)
    }

    @Test func genericPasswordFieldsAreOrderedWithClassFirst() {
        let key = genericPassword {
            $0.account = "alice"
            $0.service = "mail"
            $0.accessGroup = "team"
            $0.synchronizable = true
        }
        #expect(key.fields.map(\.name) == ["class", "agrp", "sync", "acct", "svce"])
        #expect(key.fields[0].bytes == Array("genp".utf8))
        #expect(key.fields[2].bytes == [1])
        #expect(key.fields[3].bytes == Array("alice".utf8))
    }

    @Test func internetPasswordFieldsFollowApple() {
        let key = PrimaryKey(itemClass: .internetPassword, attributes: ItemAttributes([.port: .integer(443)]))
        #expect(key.fields.map(\.name) == ["class", "agrp", "sync", "acct", "sdmn", "srvr", "ptcl", "atyp", "port", "path"])
        #expect(key.fields[8].bytes == [0, 0, 0, 0, 0, 0, 1, 0xBB])
    }

    @Test func missingKeyAttributeCountsAsEmpty() {
        let without = genericPassword { $0.service = "mail" }
        let empty = genericPassword {
            $0.service = "mail"
            $0.account = ""
            $0.synchronizable = false
            $0.accessGroup = ""
        }
        #expect(without == empty)
        #expect(without.fields == empty.fields)
    }

    @Test func nonKeyAttributesDoNotChangeTheKey() {
        let plain = genericPassword { $0.service = "mail" }
        let labelled = genericPassword {
            $0.service = "mail"
            $0.label = "Mail"
            $0.comment = "c"
            $0.accessible = .always
        }
        #expect(plain == labelled)
    }

    @Test func synchronizableFlagSeparatesKeys() {
        let local = genericPassword { $0.service = "mail" }
        let synced = genericPassword {
            $0.service = "mail"
            $0.synchronizable = true
        }
        #expect(local != synced)
        #expect(synced.isSynchronizable && !local.isSynchronizable)
    }

    @Test(arguments: ItemClass.allCases)
    func everyClassKeyStartsWithAccessGroupAndSync(itemClass: ItemClass) {
        #expect(Array(itemClass.primaryKeyAttributes.prefix(2)) == [.accessGroup, .synchronizable])
        #expect(itemClass.primaryKeyAttributes.allSatisfy(itemClass.allowedAttributes.contains))
    }
}

import Foundation
import KeychainCrypto
import Testing

@Suite struct ItemIDTests {
    let key = AccountKey.generate()

    @Test func sameItemGivesTheSameIDOnEveryDevice() throws {
        let fields: [(name: String, value: [UInt8])] = [("class", Array("genp".utf8)), ("acct", Array("alice".utf8)), ("svce", Array("mail".utf8))]
        let deviceOne = AccountKeys(accountKey: key)
        let deviceTwo = try AccountKeys(accountKey: AccountKey(rawRepresentation: key.rawRepresentation))
        #expect(deviceOne.itemID(zone: "keychain", fields: fields) == deviceTwo.itemID(zone: "keychain", fields: fields))
    }

    @Test func concatenationTricksGiveDifferentIDs() {
        let keys = AccountKeys(accountKey: key)
        let candidates: [(zone: String, fields: [(name: String, value: [UInt8])])] = [
            ("keychain", [("acct", Array("ab".utf8)), ("svce", Array("c".utf8))]),
            ("keychain", [("acct", Array("a".utf8)), ("svce", Array("bc".utf8))]),
            ("keychain", [("acct", Array("abc".utf8))]),
            ("keychain", [("acctab", []), ("svce", Array("c".utf8))]),
            ("keychai", [("nacct", Array("ab".utf8)), ("svce", Array("c".utf8))]),
            ("keychain", [("svce", Array("c".utf8)), ("acct", Array("ab".utf8))]),
            ("keychain", []),
            ("kv.settings", [("key", Array("ab".utf8))]),
        ]
        let ids = candidates.map { keys.itemID(zone: $0.zone, fields: $0.fields) }
        #expect(Set(ids).count == candidates.count)
    }

    @Test func anotherAccountKeyGivesAnotherID() {
        let fields: [(name: String, value: [UInt8])] = [("key", Array("theme".utf8))]
        let mine = AccountKeys(accountKey: key).itemID(zone: "kv.settings", fields: fields)
        let theirs = AccountKeys(accountKey: .generate()).itemID(zone: "kv.settings", fields: fields)
        #expect(mine != theirs)
    }

    @Test func idIsSixtyFourLowercaseHexDigits() {
        let id = AccountKeys(accountKey: key).itemID(zone: "keychain", fields: [])
        #expect(id.rawValue.count == 64)
        #expect(id.rawValue.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) })
    }
}

import Foundation
import Testing

/// `keychain import` keeps everything it can read (other URLs, custom fields sealed, folders),
/// names each entry it skips and why, counts unchanged entries apart, and meets the same login
/// from two managers as one item (decision 0273).
@Suite struct ImportFidelityTests {
    static let bitwarden = """
        {"encrypted": false, "folders": [{"id": "f1", "name": "Finance"}], "items": [
          {"type": 1, "name": "Bank", "folderId": "f1", "notes": null,
           "login": {"uris": [{"uri": "https://bank.example/login"}, {"uri": "https://m.bank.example"}], "username": "u", "password": "bank-secret"},
           "fields": [{"name": "recovery code", "value": "RC-7731", "type": 1}, {"name": "PIN hint", "value": "birthday", "type": 0},
                      {"name": "remember", "value": "true", "type": 2}, {"name": "user", "value": null, "type": 3, "linkedId": 100}]},
          {"type": 3, "name": "Visa", "card": {"number": "4111111111111111"}},
          {"type": 4, "name": "Me", "identity": {"firstName": "A"}},
          {"type": 1, "name": "Nothing", "login": {"username": "x"}}
        ]}
        """

    @Test func bitwardenFieldsURLsAndFoldersAreKeptAndSkippedEntriesAreNamed() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        let file = try ImportExportTests().write(Self.bitwarden, in: keychain, name: "bitwarden.json")
        let result = try keychain.run(["import", "--format", "bitwarden-json", file])
        #expect(result.text == "imported 2, updated 0, unchanged 0, skipped 3\n", "\(result.stderr)")
        #expect(result.stderr.contains("keychain: skipped item 2: a card, not kept"), "\(result.stderr)")
        #expect(result.stderr.contains("keychain: skipped item 3: an identity, not kept"), "\(result.stderr)")
        #expect(result.stderr.contains("keychain: skipped item 4: nothing to keep"), "\(result.stderr)")
        #expect(!result.stderr.contains("4111") && !result.stderr.contains("RC-7731"))

        #expect(try keychain.run(["find-internet-password", "-s", "bank.example", "-a", "u", "-w"]).text == "bank-secret\n")
        let attributes = try keychain.run(["find-internet-password", "-s", "bank.example", "-a", "u"]).text
        #expect(attributes.contains("Finance/Bank"), "\(attributes)")
        #expect(attributes.contains("Other URLs: https://m.bank.example"), "\(attributes)")
        // The custom fields are sealed beside the login, never in an attribute.
        let fields = try keychain.run(["find-generic-password", "-s", "fields:bank.example", "-a", "u", "-w"]).text
        #expect(fields == "recovery code: RC-7731\nPIN hint: birthday\nremember: true\n")
        #expect(!(try keychain.run(["find-generic-password", "-s", "fields:bank.example", "-a", "u"]).text.contains("RC-7731")))

        let again = try keychain.run(["import", "--format", "bitwarden-json", file])
        #expect(again.text == "imported 0, updated 0, unchanged 2, skipped 3\n", "\(again.stderr)")
    }

    @Test func theSameLoginFromChromeThenFirefoxIsOneItem() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        let chrome = "name,url,username,password\nShop,https://Shop.example/account/login?next=1,me,shop-secret\n"
        let firefox = "\"url\",\"username\",\"password\",\"httpRealm\"\n\"https://shop.example\",\"me\",\"shop-secret\",\"\"\n"
        #expect(try keychain.run(["import", "--format", "chrome-csv", try ImportExportTests().write(chrome, in: keychain, name: "c.csv")]).text.hasPrefix("imported 1,"))
        let second = try keychain.run(["import", "--format", "firefox-csv", try ImportExportTests().write(firefox, in: keychain, name: "f.csv")])
        #expect(second.text.hasPrefix("imported 0,"), "\(second.text)")
        #expect(try keychain.run(["find-internet-password", "-s", "shop.example", "-a", "me", "-w"]).text == "shop-secret\n")
    }

    @Test func twoEntriesThatAreOneItemAreSaid() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        let chrome = "name,url,username,password\nA,https://a.example/one,me,first\nB,https://a.example/two,me,second\n"
        let result = try keychain.run(["import", "--format", "chrome-csv", try ImportExportTests().write(chrome, in: keychain, name: "c.csv")])
        #expect(result.stderr.contains("line 3 is the same item as line 2 (same site or service and account): the later one is kept"), "\(result.stderr)")
        #expect(try keychain.run(["find-internet-password", "-s", "a.example", "-a", "me", "-w"]).text == "second\n")
    }
}

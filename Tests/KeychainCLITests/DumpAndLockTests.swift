import Foundation
import Testing

@Suite struct DumpAndLockTests {
    @Test func dumpKeychainJSONListsItemsAndDataOnlyWithDashD() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        try keychain.run(["add-generic-password", "-a", "alice", "-s", "mail", "-w", "topsecret", "-l", "Mail", "--sync"])
        try keychain.run(["add-internet-password", "-a", "bob", "-s", "example.com", "-w", "pw2"])
        let plain = try keychain.run(["dump-keychain", "--json"])
        #expect(plain.status == 0)
        let items = try #require(try JSONSerialization.jsonObject(with: plain.stdout) as? [[String: Any]])
        #expect(items.count == 2)
        let mail = try #require(items.first { $0["service"] as? String == "mail" })
        #expect(mail["class"] as? String == "generic-password")
        #expect(mail["account"] as? String == "alice" && mail["label"] as? String == "Mail")
        #expect(mail["synchronizable"] as? Bool == true && mail["accessible"] as? String == "when-unlocked")
        #expect(mail["created"] is String && mail["modified"] is String)
        #expect(mail["data"] == nil && !plain.text.contains("topsecret"))
        #expect(items.contains { $0["server"] as? String == "example.com" })
        let withData = try keychain.run(["dump-keychain", "-d", "--json"])
        let dataItems = try #require(try JSONSerialization.jsonObject(with: withData.stdout) as? [[String: Any]])
        #expect(dataItems.contains { $0["data"] as? String == "topsecret" })
        #expect(try keychain.run(["dump-keychain"]).text.contains("account: \"alice\""))
    }

    @Test func lockInOneProcessDeniesAnotherWithoutRevealingExistence() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-w", "pw"])
        #expect(try keychain.run(["lock"]).status == 0)
        let existing = try keychain.run(["find-generic-password", "-a", "me", "-s", "svc", "-w"])
        let missing = try keychain.run(["find-generic-password", "-a", "nobody", "-s", "svc", "-w"])
        for result in [existing, missing] {
            #expect(result.status != 0 && result.status != 44)
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.contains("interaction not allowed"))
        }
        #expect(existing.status == missing.status && existing.stderr == missing.stderr)
        // An "always" item stays readable when the search names its class.
        try keychain.run(["add-generic-password", "-a", "bot", "-s", "svc", "-w", "token", "--accessible", "always"])
        #expect(try keychain.run(["find-generic-password", "-a", "bot", "--accessible", "always", "-w"]).text == "token\n")
        #expect(try keychain.run(["unlock"]).status == 0)
        #expect(try keychain.run(["find-generic-password", "-a", "me", "-s", "svc", "-w"]).text == "pw\n")
    }

    @Test func passcodeFromFileAndEnvironment() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-w", "pw"])
        let set = try keychain.run(["set-passcode"], environment: ["KEYCHAIN_NEW_PASSCODE": "1234"])
        #expect(set.status == 0, "\(set.stderr)")
        try keychain.run(["lock"])
        let noPasscode = try keychain.run(["unlock"])
        #expect(noPasscode.status != 0 && noPasscode.stderr.split(separator: "\n").count == 1)
        let wrong = try keychain.run(["unlock"], environment: ["KEYCHAIN_PASSCODE": "0000"])
        #expect(wrong.status != 0 && !wrong.stderr.contains("0000"))
        #expect(try keychain.run(["find-generic-password", "-a", "me", "-w"]).status != 0)
        let file = keychain.directory.appendingPathComponent("passcode")
        try Data("1234\n".utf8).write(to: file)
        #expect(try keychain.run(["unlock", "--passcode-file", file.path]).status == 0)
        #expect(try keychain.run(["find-generic-password", "-a", "me", "-w"]).text == "pw\n")
    }
}

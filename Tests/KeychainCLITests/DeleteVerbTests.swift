import Foundation
import KeychainModel
import KeychainStore
import Testing

/// `delete-generic-password` and `delete-internet-password` delete one matching item; several, or
/// a search without any filter, only with `--all`, which asks first on a terminal (design §7). The
/// items sync-client and the Secret Service keep for themselves match no search that does not
/// name their access group (decision 0260).
@Suite struct DeleteVerbTests {
    func keychainWith(_ items: [[String]]) throws -> KeychainProcess {
        let keychain = KeychainProcess.temporary()
        for item in items {
            let added = try keychain.run(item)
            #expect(added.status == 0, "\(added.stderr)")
        }
        return keychain
    }

    func count(_ keychain: KeychainProcess, _ filters: [String] = []) throws -> Int {
        let found = try keychain.run(["dump-keychain", "--json"])
        let items = try #require(try JSONSerialization.jsonObject(with: found.stdout) as? [[String: Any]])
        return items.count
    }

    @Test func severalMatchesDeleteNothingAndSayHowMany() throws {
        let keychain = try keychainWith([
            ["add-generic-password", "-a", "me", "-s", "one", "-w", "1"],
            ["add-generic-password", "-a", "me", "-s", "two", "-w", "2"],
            ["add-generic-password", "-a", "me", "-s", "three", "-w", "3"],
        ])
        defer { keychain.remove() }
        let refused = try keychain.run(["delete-generic-password", "-a", "me"])
        #expect(refused.status == 64, "\(refused.stderr)")
        #expect(refused.stderr.hasPrefix("keychain: 3 items match;"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--all"))
        #expect(refused.stderr.split(separator: "\n").count == 1)
        #expect(try count(keychain) == 3)
        // One match is deleted, as before.
        #expect(try keychain.run(["delete-generic-password", "-a", "me", "-s", "two"]).status == 0)
        #expect(try count(keychain) == 2)
        #expect(try keychain.run(["delete-generic-password", "-a", "nobody"]).status == 44)
    }

    @Test func noFilterDeletesNothingEvenForOneItem() throws {
        let keychain = try keychainWith([["add-generic-password", "-a", "me", "-s", "one", "-w", "1"]])
        defer { keychain.remove() }
        for command in [["delete-generic-password"], ["delete-generic-password", "--sync", "any"], ["delete-internet-password"]] {
            let refused = try keychain.run(command)
            if command[0] == "delete-internet-password" {
                #expect(refused.status == 44)
                continue
            }
            #expect(refused.status == 64, "\(command): \(refused.stderr)")
            #expect(refused.stderr.contains("no filter given and 1 item matches"), "\(refused.stderr)")
            #expect(refused.stderr.contains("--all"))
        }
        #expect(try count(keychain) == 1)
    }

    @Test func allDeletesEveryMatchWithoutAskingWhenStdinIsNotATerminal() throws {
        let keychain = try keychainWith([
            ["add-generic-password", "-a", "me", "-s", "one", "-w", "1"],
            ["add-generic-password", "-a", "me", "-s", "two", "-w", "2", "--sync"],
            ["add-generic-password", "-a", "you", "-s", "three", "-w", "3"],
        ])
        defer { keychain.remove() }
        let deleted = try keychain.run(["delete-generic-password", "-a", "me", "--sync", "any", "--all"])
        #expect(deleted.status == 0, "\(deleted.stderr)")
        #expect(deleted.stderr.isEmpty)
        #expect(try keychain.run(["find-generic-password", "-a", "you", "-w"]).text == "3\n")
        #expect(try count(keychain) == 1)
        #expect(try keychain.run(["delete-generic-password", "--all"]).status == 0)
        #expect(try count(keychain) == 0)
        #expect(try keychain.run(["delete-generic-password", "--all"]).status == 44)
    }

    @Test func allAsksOnATerminalAndDeletesOnlyOnYes() throws {
        let keychain = try keychainWith([
            ["add-generic-password", "-a", "me", "-s", "one", "-w", "1"],
            ["add-generic-password", "-a", "me", "-s", "two", "-w", "2"],
        ])
        defer { keychain.remove() }
        let question = "keychain: delete 2 items? [y/N] "
        for answer in ["\n", "n\n", "whatever\n"] {
            let declined = try keychain.runOnTerminal(["delete-generic-password", "-a", "me", "--all"], steps: [.init(expect: question, send: answer)])
            #expect(declined.missedPrompt == nil, "\(declined.output)")
            #expect(declined.status == 1, "\(declined.output)")
            #expect(declined.output.contains("delete cancelled; nothing was deleted"))
            #expect(try count(keychain) == 2)
        }
        let confirmed = try keychain.runOnTerminal(["delete-generic-password", "-a", "me", "--all"], steps: [.init(expect: question, send: "y\n")])
        #expect(confirmed.status == 0, "\(confirmed.output)")
        #expect(try count(keychain) == 0)
    }

    @Test func internetPasswordsFollowTheSameRule() throws {
        let keychain = try keychainWith([
            ["add-internet-password", "-a", "bob", "-s", "example.com", "-r", "htps", "-P", "443", "-w", "one"],
            ["add-internet-password", "-a", "bob", "-s", "example.com", "-r", "htps", "-P", "8443", "-w", "two"],
        ])
        defer { keychain.remove() }
        let refused = try keychain.run(["delete-internet-password", "-s", "example.com"])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("2 items match"), "\(refused.stderr)")
        #expect(try keychain.run(["delete-internet-password", "-s", "example.com", "-P", "8443"]).status == 0)
        #expect(try keychain.run(["find-internet-password", "-s", "example.com", "-w"]).text == "one\n")
        #expect(try keychain.run(["add-internet-password", "-a", "eve", "-s", "example.org", "-w", "three"]).status == 0)
        #expect(try keychain.run(["delete-internet-password"]).status == 64)
        #expect(try keychain.run(["delete-internet-password", "--all"]).status == 0)
        #expect(try keychain.run(["find-internet-password"]).status == 44)
    }

    /// What `DeviceSecrets` and the Secret Service store, as they store it.
    static func privateItems() -> [Item] {
        let token = Item.genericPassword(service: "synckeychain.sync-client", account: "device-token", data: Array("token".utf8)) {
            $0.accessGroup = ItemRules.syncClientAccessGroup
            $0.accessible = .afterFirstUnlockThisDeviceOnly
            $0.label = "sync-client device-token"
        }
        let secret = Item.genericPassword(service: "login", account: "0123abcd", data: Array("desktop secret".utf8)) {
            $0.accessGroup = ItemRules.secretServiceAccessGroup
            $0.synchronizable = true
            $0.label = "Mail"
        }
        return [token, secret]
    }

    @Test func theProductsOwnItemsMatchOnlyWhenTheirGroupIsNamed() throws {
        let keychain = try keychainWith([["add-generic-password", "-a", "device-token", "-s", "mine", "-w", "user's"]])
        defer { keychain.remove() }
        let store = try Keychain.open(at: keychain.path)
        for item in Self.privateItems() { try store.add(item) }

        #expect(try keychain.run(["find-generic-password", "-s", "synckeychain.sync-client"]).status == 44)
        #expect(try keychain.run(["find-generic-password", "-a", "device-token", "-w"]).text == "user's\n")
        #expect(try keychain.run(["find-generic-password", "-s", "login", "--sync", "any"]).status == 44)
        #expect(try keychain.run(["delete-generic-password", "-s", "synckeychain.sync-client", "--all"]).status == 44)
        // Every item the user can see goes; the product's own stay.
        #expect(try keychain.run(["delete-generic-password", "--sync", "any", "--all"]).status == 0)
        #expect(try keychain.run(["find-generic-password", "--sync", "any"]).status == 44)
        #expect(try count(keychain) == 2)
        let export = try keychain.run(["export", "--format", "json"])
        #expect(export.status == 0)
        // The sync client's secrets never leave in an export; the Secret Service's items are the
        // user's passwords and do.
        #expect(!export.text.contains("sync-client") && export.text.contains("desktop secret"), "\(export.text)")

        // Named, the group is searched as any other.
        let named = try keychain.run(["find-generic-password", "--access-group", ItemRules.syncClientAccessGroup, "-a", "device-token", "-w"])
        #expect(named.text == "token\n", "\(named.stderr)")
        #expect(try keychain.run(["find-generic-password", "--access-group", ItemRules.secretServiceAccessGroup, "--sync", "yes", "-w"]).text == "desktop secret\n")
        #expect(try keychain.run(["delete-generic-password", "--access-group", ItemRules.secretServiceAccessGroup, "--sync", "yes"]).status == 0)
        #expect(try count(keychain) == 1)
    }
}

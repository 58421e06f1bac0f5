import Foundation
import KeychainModel
import KeychainStore
import Testing

/// `keychain history`: the built binary against a keychain whose history was filled the way the
/// sync engine fills it (versions lost in conflict resolution).
@Suite struct HistoryVerbTests {
    func synced(_ secret: String, label: String) -> Item {
        Item.genericPassword(service: "svc", account: "me", data: Array(secret.utf8)) {
            $0.synchronizable = true
            $0.label = label
        }
    }

    /// A keychain holding "current" with two lost versions, "older" then "old".
    func keychainWithHistory() throws -> KeychainProcess {
        let keychain = KeychainProcess.temporary()
        #expect(try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-w", "current", "--sync"]).status == 0)
        let store = try Keychain.open(at: keychain.path)
        try store.recordHistoryVersion(synced("older", label: "first loser"), versionTag: [1])
        try store.recordHistoryVersion(synced("old", label: "second loser"), versionTag: [2])
        return keychain
    }

    func lines(_ output: KeychainProcess.Output) -> [[String]] {
        output.text.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
    }

    @Test func historyListsKeptVersionsOldestFirstWithoutPasswords() throws {
        let keychain = try keychainWithHistory()
        defer { keychain.remove() }
        let history = try keychain.run(["history", "-a", "me", "-s", "svc", "--sync"])
        #expect(history.status == 0)
        let rows = lines(history)
        #expect(rows.map(\.count) == [3, 3])
        #expect(rows.map { $0[2] } == ["first loser", "second loser"])
        #expect(!history.text.contains("old"))
        #expect(rows.allSatisfy { (try? Date($0[1], strategy: .iso8601)) != nil })
    }

    @Test func historyDefaultsToAnyItemAndTakesSyncYesNoAny() throws {
        let keychain = try keychainWithHistory()
        defer { keychain.remove() }
        // Conflict versions exist only for synchronizable items: the default must find them.
        let byDefault = try keychain.run(["history", "-a", "me", "-s", "svc"])
        #expect(byDefault.status == 0)
        #expect(lines(byDefault).map { $0[2] } == ["first loser", "second loser"])
        #expect(try keychain.run(["history", "-a", "me", "-s", "svc", "--sync", "any"]).text == byDefault.text)
        #expect(try keychain.run(["history", "-a", "me", "-s", "svc", "--sync", "yes"]).text == byDefault.text)
        let local = try keychain.run(["history", "-a", "me", "-s", "svc", "--sync", "no"])
        #expect(local.status == 44 && local.stdout.isEmpty)
        let number = try #require(lines(byDefault).first?.first)
        #expect(try keychain.run(["history", "-a", "me", "-s", "svc", "--sync", "no", "--restore", number]).status == 44)
        let wrong = try keychain.run(["history", "-a", "me", "-s", "svc", "--sync", "maybe"])
        #expect(wrong.status != 0 && wrong.status != 44)
    }

    @Test func historyListsVersionsOfTheLocalAndTheSynchronizableItemTogether() throws {
        let keychain = try keychainWithHistory()
        defer { keychain.remove() }
        let store = try Keychain.open(at: keychain.path)
        try store.recordHistoryVersion(Item.genericPassword(service: "svc", account: "me", data: Array("local old".utf8)) {
            $0.label = "local loser"
        }, versionTag: [3])
        let both = try keychain.run(["history", "-a", "me", "-s", "svc", "-w"])
        #expect(lines(both).map { $0[2] } == ["first loser", "second loser", "local loser"])
        #expect(lines(both).map { $0.last } == ["older", "old", "local old"])
        #expect(lines(try keychain.run(["history", "-a", "me", "-s", "svc", "--sync", "no"])).map { $0[2] } == ["local loser"])
    }

    @Test func historyWithWPrintsEachVersionsPassword() throws {
        let keychain = try keychainWithHistory()
        defer { keychain.remove() }
        let history = try keychain.run(["history", "-a", "me", "-s", "svc", "--sync", "-w"])
        #expect(history.status == 0)
        #expect(lines(history).map { $0.last } == ["older", "old"])
        // -w is a flag here: an account of "--" after it still reads as a value.
        let escaped = try keychain.run(["history", "-s", "svc", "--sync", "-w", "-a", "--"])
        #expect(escaped.status == 44 && escaped.stderr.contains("no history"))
    }

    @Test func historyPasswordsStayLockedWithTheKeychain() throws {
        let keychain = try keychainWithHistory()
        defer { keychain.remove() }
        #expect(try keychain.run(["lock"]).status == 0)
        let history = try keychain.run(["history", "-a", "me", "-s", "svc", "--sync", "-w"])
        #expect(history.status != 0 && history.stdout.isEmpty)
        #expect(!history.stderr.contains("older"))
    }

    @Test func restoreMakesAVersionCurrentAndKeepsTheDisplacedOne() throws {
        let keychain = try keychainWithHistory()
        defer { keychain.remove() }
        let number = try #require(lines(try keychain.run(["history", "-a", "me", "-s", "svc", "--sync"])).first?.first)
        #expect(try keychain.run(["history", "-a", "me", "-s", "svc", "--sync", "--restore", number]).status == 0)
        #expect(try keychain.run(["find-generic-password", "-a", "me", "-s", "svc", "--sync", "yes", "-w"]).text == "older\n")
        let after = lines(try keychain.run(["history", "-a", "me", "-s", "svc", "--sync", "-w"]))
        #expect(after.map { $0.last } == ["old", "current"])
        #expect(try keychain.run(["history", "-a", "me", "-s", "svc", "--sync", "--restore", number]).status == 44)
    }

    @Test func historyOfAnItemWithoutLostVersionsIsNotFound() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-w", "pw", "--sync"])
        let history = try keychain.run(["history", "-a", "me", "-s", "svc", "--sync"])
        #expect(history.status == 44 && history.stdout.isEmpty)
        #expect(try keychain.run(["history", "-a", "me", "-s", "svc", "--restore", "1"]).status == 44)
    }
}

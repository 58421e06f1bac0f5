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

    /// The rows under the header row (which must be there).
    func lines(_ output: KeychainProcess.Output) -> [[String]] {
        let rows = output.text.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        #expect(rows.first?.prefix(5) == ["VERSION", "RECORDED", "MODIFIED", "SYNC", "LABEL"], "\(output.text)")
        return Array(rows.dropFirst())
    }

    @Test func historyListsKeptVersionsOldestFirstWithoutPasswords() throws {
        let keychain = try keychainWithHistory()
        defer { keychain.remove() }
        let history = try keychain.run(["history", "-a", "me", "-s", "svc", "--sync"])
        #expect(history.status == 0)
        let rows = lines(history)
        #expect(rows.map(\.count) == [5, 5])
        #expect(rows.map { $0[safe: 4] } == ["first loser", "second loser"])
        #expect(!history.text.contains("old"))
        #expect(rows.allSatisfy { (try? Date($0[safe: 1] ?? "", strategy: .iso8601)) != nil && (try? Date($0[safe: 2] ?? "", strategy: .iso8601)) != nil })
        #expect(rows.map { $0[safe: 3] } == ["yes", "yes"])
    }

    @Test func everyColumnIsFilledAndTheHeaderNamesThem() throws {
        let keychain = try keychainWithHistory()
        defer { keychain.remove() }
        let store = try Keychain.open(at: keychain.path)
        try store.recordHistoryVersion(Item.genericPassword(service: "svc", account: "me", data: Array("unlabelled".utf8)) {
            $0.synchronizable = true
        }, versionTag: [9])
        let history = try keychain.run(["history", "-a", "me", "-s", "svc", "-w"])
        let header = try #require(history.text.split(separator: "\n").first)
        #expect(header == "VERSION\tRECORDED\tMODIFIED\tSYNC\tLABEL\tPASSWORD")
        let rows = lines(history)
        #expect(rows.count == 3)
        #expect(rows.allSatisfy { $0.count == 6 && $0.allSatisfy { !$0.isEmpty } }, "\(history.text)")
        #expect(rows.last?[safe: 4] == "-")
        #expect(rows.last?[safe: 5] == "unlabelled")
    }

    @Test func findSaysWhenAnItemHasEarlierVersions() throws {
        let keychain = try keychainWithHistory()
        defer { keychain.remove() }
        let found = try keychain.run(["find-generic-password", "-a", "me", "-s", "svc", "--sync", "yes"])
        #expect(found.status == 0)
        #expect(found.text.contains("    history: 2 earlier versions (keychain history -a \"me\" -s \"svc\")\n"), "\(found.text)")
        // -w prints the password alone, as before.
        #expect(try keychain.run(["find-generic-password", "-a", "me", "-s", "svc", "--sync", "yes", "-w"]).text == "current\n")
        // An item without kept versions has no such line.
        #expect(try keychain.run(["add-generic-password", "-a", "me", "-s", "other", "-w", "x"]).status == 0)
        #expect(!(try keychain.run(["find-generic-password", "-a", "me", "-s", "other"]).text.contains("history")))

        #expect(try keychain.run(["add-internet-password", "-a", "me", "-s", "example.com", "-w", "web", "--sync"]).status == 0)
        try Keychain.open(at: keychain.path).recordHistoryVersion(Item(itemClass: .internetPassword, attributes: {
            var attributes = ItemAttributes()
            attributes.account = "me"
            attributes.server = "example.com"
            attributes.synchronizable = true
            return attributes
        }(), data: Array("older web".utf8)), versionTag: [7])
        let internet = try keychain.run(["find-internet-password", "-s", "example.com", "--sync", "yes"])
        #expect(internet.text.contains("    history: 1 earlier version (kept by conflict resolution)\n"), "\(internet.text)")
    }

    @Test func historyDefaultsToAnyItemAndTakesSyncYesNoAny() throws {
        let keychain = try keychainWithHistory()
        defer { keychain.remove() }
        // Conflict versions exist only for synchronizable items: the default must find them.
        let byDefault = try keychain.run(["history", "-a", "me", "-s", "svc"])
        #expect(byDefault.status == 0)
        #expect(lines(byDefault).map { $0[safe: 4] } == ["first loser", "second loser"])
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
        #expect(lines(both).map { $0[safe: 4] } == ["first loser", "second loser", "local loser"])
        #expect(lines(both).map { $0.last } == ["older", "old", "local old"])
        #expect(lines(try keychain.run(["history", "-a", "me", "-s", "svc", "--sync", "no"])).map { $0[safe: 4] } == ["local loser"])
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
        let restore = try keychain.run(["history", "-a", "me", "-s", "svc", "--sync", "--restore", number])
        #expect(restore.status == 0)
        #expect(try keychain.run(["find-generic-password", "-a", "me", "-s", "svc", "--sync", "yes", "-w"]).text == "older\n")
        let after = lines(try keychain.run(["history", "-a", "me", "-s", "svc", "--sync", "-w"]))
        #expect(after.map { $0.last } == ["old", "current"])
        let replaced = try #require(after.last?.first)
        #expect(restore.text.hasPrefix("restored version \(number) (recorded "), "\(restore.text)")
        #expect(restore.text.contains(", label \"first loser\") as the current synchronizable item, account \"me\", service \"svc\""))
        #expect(restore.text.hasSuffix("; the item it replaced is kept as version \(replaced)\n"))
        #expect(!restore.text.contains("older") && !restore.text.contains("current\t"))
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

extension Array where Element == String {
    /// The column at `index`, nil when the row is shorter: a row of another shape fails the
    /// expectation instead of stopping the test process.
    subscript(safe index: Int) -> String? { indices.contains(index) ? self[index] : nil }
}

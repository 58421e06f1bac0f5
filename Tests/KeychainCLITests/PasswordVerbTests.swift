import Foundation
import Testing

@Suite struct PasswordVerbTests {
    static let awkwardValues = [
        "", "plain", "ünïcødé 🔑 パスワード", "  leading and trailing spaces  ", "tab\there", "line1\nline2\n",
        "-secret", "--", "-w", "--keychain", "-", "a b -c --d",
    ]

    @Test(arguments: awkwardValues)
    func anyPasswordRoundTripsThroughDashW(value: String) throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        let add = try keychain.run(["add-generic-password", "-a", value, "-s", value, "-w", value, "-l", value])
        #expect(add.status == 0, "\(add.stderr)")
        let find = try keychain.run(["find-generic-password", "-a", value, "-s", value, "-w"])
        #expect(find.status == 0)
        #expect(find.stdout == Data((value + "\n").utf8))
        #expect(find.stderr.isEmpty)
    }

    @Test func exitCodesFollowSecurity() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        #expect(try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-w", "pw"]).status == 0)
        let duplicate = try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-w", "new-secret-value"])
        #expect(duplicate.status == 45)
        #expect(duplicate.stderr.hasSuffix("\n") && duplicate.stderr.dropLast().contains("\n") == false)
        #expect(!duplicate.stderr.contains("new-secret-value"))
        #expect(try keychain.run(["find-generic-password", "-a", "nobody"]).status == 44)
        #expect(try keychain.run(["delete-generic-password", "-a", "nobody"]).status == 44)
        #expect(try keychain.run(["delete-generic-password", "-a", "me", "-s", "svc"]).status == 0)
        #expect(try keychain.run(["find-generic-password", "-a", "me", "-s", "svc"]).status == 44)
        let usage = try keychain.run(["add-generic-password", "-a", "me"])
        #expect(usage.status != 0 && usage.status != 44 && usage.status != 45)
        #expect(usage.stderr.split(separator: "\n").count == 1)
    }

    @Test func dashUUpdatesTheExistingItem() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-w", "old"])
        #expect(try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-w", "new", "-U", "-j", "note"]).status == 0)
        #expect(try keychain.run(["find-generic-password", "-a", "me", "-s", "svc", "-w"]).text == "new\n")
        #expect(try keychain.run(["find-generic-password", "-a", "me", "-s", "svc"]).text.contains("comment: \"note\""))
    }

    /// A search without `--sync` leaves synchronizable items out (design §3); when that is why it
    /// found nothing, the message says so, and the status is still 44.
    @Test func notFoundSaysWhenOnlyASynchronizableItemMatches() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-w", "synced", "--sync"])
        try keychain.run(["add-internet-password", "-a", "me", "-s", "example.com", "-w", "web", "--sync"])
        let hint = "item not found; a synchronizable item matches (add --sync yes, or --sync any)\n"
        for command in [
            ["find-generic-password", "-a", "me", "-s", "svc", "-w", "--keychain", keychain.path],
            // The parser's path (an option spelled with `=`) as well as the fast one.
            ["find-generic-password", "--keychain=\(keychain.path)", "-a", "me"],
            ["delete-generic-password", "-a", "me", "--keychain", keychain.path],
            ["find-internet-password", "-s", "example.com", "--keychain", keychain.path],
            ["delete-internet-password", "-s", "example.com", "--keychain", keychain.path],
        ] {
            let result = try keychain.run(command, keychainOption: false)
            #expect(result.status == 44 && result.stdout.isEmpty && result.stderr == "keychain: " + hint, "\(command) \(result.stderr)")
        }
        for command in [["find-generic-password", "-a", "nobody"], ["find-generic-password", "-a", "me", "--sync", "no"]] {
            let result = try keychain.run(command)
            #expect(result.status == 44 && result.text.isEmpty, "\(command)")
        }
        #expect(try keychain.run(["find-generic-password", "-a", "nobody"]).stderr == "keychain: item not found\n")
        #expect(try keychain.run(["find-generic-password", "-a", "me", "--sync", "yes", "-w"]).text == "synced\n")
    }

    @Test func syncFilterSelectsSynchronizableItems() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-w", "local"])
        try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-w", "synced", "--sync"])
        #expect(try keychain.run(["find-generic-password", "-a", "me", "-w"]).text == "local\n")
        #expect(try keychain.run(["find-generic-password", "-a", "me", "--sync", "yes", "-w"]).text == "synced\n")
        #expect(try keychain.run(["delete-generic-password", "-a", "me", "--sync", "any", "--all"]).status == 0)
        #expect(try keychain.run(["find-generic-password", "-a", "me", "--sync", "any"]).status == 44)
        let refused = try keychain.run(["add-generic-password", "-a", "x", "-s", "y", "-w", "z", "--sync", "--accessible", "when-unlocked-this-device-only"])
        #expect(refused.status != 0 && refused.status != 44 && refused.status != 45)
    }

    @Test func internetPasswordVerbs() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        #expect(try keychain.run(["add-internet-password", "-a", "bob", "-s", "example.com", "-r", "htps", "-P", "443", "-p", "/login", "-w", "pw1"]).status == 0)
        #expect(try keychain.run(["add-internet-password", "-a", "bob", "-s", "example.com", "-r", "htps", "-P", "8443", "-w", "pw2"]).status == 0)
        #expect(try keychain.run(["add-internet-password", "-a", "bob", "-s", "example.com", "-r", "htps", "-P", "443", "-p", "/login", "-w", "x"]).status == 45)
        #expect(try keychain.run(["find-internet-password", "-s", "example.com", "-P", "8443", "-w"]).text == "pw2\n")
        #expect(try keychain.run(["delete-internet-password", "-s", "example.com", "--all"]).status == 0)
        #expect(try keychain.run(["find-internet-password", "-s", "example.com"]).status == 44)
    }

    @Test func defaultKeychainComesFromTheEnvironment() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        let environment = ["KEYCHAIN_PATH": keychain.path]
        #expect(try keychain.run(["add-generic-password", "-a", "a", "-s", "s", "-w", "pw"], environment: environment, keychainOption: false).status == 0)
        #expect(try keychain.run(["find-generic-password", "-a", "a", "-w"]).text == "pw\n")
        // Without $KEYCHAIN_PATH: the per-user data directory under $HOME.
        try keychain.run(["add-generic-password", "-a", "b", "-s", "s", "-w", "pw"], keychainOption: false)
        #expect(FileManager.default.fileExists(atPath: keychain.directory.appendingPathComponent(".local/share/synckeychain/keychain.db").path))
    }
}

import Foundation
import Testing

/// A verb that does not store anything needs the keychain to exist: a mistyped path used to
/// create a keychain and its directories there, then answer "item not found" (44) from it.
@Suite struct MissingKeychainTests {
    static let readers: [[String]] = [
        ["find-generic-password", "-a", "me", "-w"],
        ["find-generic-password", "-a", "me", "--sync", "any"],
        ["find-internet-password", "-s", "example.com"],
        ["dump-keychain"],
        ["export", "--format", "json"],
        ["history", "-a", "me", "-s", "svc"],
        ["delete-generic-password", "-a", "me"],
        ["lock"],
        ["unlock"],
        ["kv", "--store", "app", "get", "k"],
        ["kv", "--store", "app", "list", "--json"],
        ["kv", "--store", "app", "remove", "k"],
    ]

    @Test(arguments: readers)
    func aReaderRefusesAMissingKeychainNamingItAndCreatesNothing(arguments: [String]) throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        let result = try keychain.run(arguments)
        #expect(result.status != 0 && result.status != 44)
        #expect(result.stderr == "keychain: there is no keychain at \(keychain.path)\n")
        #expect(result.stdout.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: keychain.directory.appendingPathComponent("kc").path))
    }

    /// The verbs that store something still create the keychain (or, for `kv set`, the store's
    /// database beside it), and the readers then read what they stored.
    @Test func writersCreateAndReadersThenRead() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        #expect(try keychain.run(["kv", "--store", "app", "set", "k", "v"]).status == 0)
        #expect(try keychain.run(["kv", "--store", "app", "get", "k"]).text == "v\n")
        #expect(try keychain.run(["find-generic-password", "-a", "me"]).stderr == "keychain: there is no keychain at \(keychain.path)\n")
        #expect(try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-w", "pw"]).status == 0)
        #expect(try keychain.run(["find-generic-password", "-a", "me", "-w"]).text == "pw\n")
        // An existing keychain without a key-value database: its stores are empty, and stay uncreated.
        let other = KeychainProcess.temporary()
        defer { other.remove() }
        #expect(try other.run(["add-generic-password", "-a", "me", "-s", "svc", "-w", "pw"]).status == 0)
        #expect(try other.run(["kv", "--store", "app", "get", "k"]).status == 44)
        #expect(try other.run(["kv", "--store", "app", "list", "--json"]).text == "{}\n")
        #expect(!FileManager.default.fileExists(atPath: (other.path as NSString).deletingPathExtension + ".kv.sqlite"))
    }

    /// `keychain --keychain PATH VERB …`, the option before the verb, as every tool takes it.
    @Test(arguments: [
        (["--keychain", "PATH", "find-generic-password", "-a", "me", "-w"], "pw\n"),
        (["--keychain=PATH", "find-generic-password", "-a", "me", "-w"], "pw\n"),
        (["--keychain", "PATH", "find-generic-password", "-a", "me", "--sync", "any", "-w"], "pw\n"),
        (["--keychain", "PATH", "kv", "--store", "app", "get", "k"], "v\n"),
        (["--keychain", "PATH", "kv", "--store", "app", "get", "--", "k"], "v\n"),
    ])
    func theKeychainOptionMayComeBeforeTheVerb(arguments: [String], printed: String) throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        #expect(try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-w", "pw"]).status == 0)
        #expect(try keychain.run(["kv", "--store", "app", "set", "k", "v"]).status == 0)
        let line = arguments.map { $0.replacingOccurrences(of: "PATH", with: keychain.path) }
        let result = try keychain.run(line, keychainOption: false)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.text == printed)
    }
}

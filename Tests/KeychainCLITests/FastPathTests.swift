import Foundation
import Testing

/// The hot verbs' hand-written reader (decision 0160) against swift-argument-parser: the same
/// command line, once in the plain form the fast path reads and once as `--keychain=PATH`, which
/// only the parser reads, gives the same output, errors and exit status.
@Suite struct FastPathTests {
    func both(_ keychain: KeychainProcess, _ arguments: [String]) throws -> (fast: KeychainProcess.Output, parsed: KeychainProcess.Output) {
        let fast = try keychain.run(arguments)
        let parsed = try keychain.run(arguments + ["--keychain=\(keychain.path)"], keychainOption: false)
        return (fast, parsed)
    }

    @Test(arguments: [
        ["find-generic-password", "-a", "me", "-s", "svc", "-w"],
        ["find-generic-password", "-s", "svc"],
        ["find-generic-password", "-a", "nobody", "-w"],
        ["find-generic-password", "-s", "svc", "--sync", "maybe"],
        ["find-generic-password", "-s", "svc", "--accessible", "sometimes"],
        ["find-internet-password", "-s", "example.com", "-P", "443", "-w"],
        ["find-internet-password", "-s", "example.com", "-P", "https"],
        ["add-generic-password", "-a", "me", "-s", "svc", "-w", "again"],
        ["add-generic-password", "-a", "me", "-s", "svc"],
        ["find-generic-password", "-a", "me", "-a", "me"],
        ["find-generic-password", "--group", "nobodys", "-s", "svc", "-w"],
        ["add-generic-password", "--group", "nobodys", "-a", "me", "-s", "svc", "-w", "shared"],
    ])
    func bothReadersAgree(arguments: [String]) throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        #expect(try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-w", "pw", "-l", "label"]).status == 0)
        #expect(try keychain.run(["add-internet-password", "-a", "u", "-s", "example.com", "-P", "443", "-w", "web"]).status == 0)
        let (fast, parsed) = try both(keychain, arguments)
        #expect(fast.status == parsed.status)
        #expect(fast.text == parsed.text)
        #expect(fast.stderr == parsed.stderr)
    }

    @Test func dashUUpdatesThroughTheFastPath() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        #expect(try keychain.run(["add-internet-password", "-a", "u", "-s", "example.com", "-w", "one", "--sync"]).status == 0)
        #expect(try keychain.run(["add-internet-password", "-a", "u", "-s", "example.com", "-w", "two", "--sync"]).status == 45)
        #expect(try keychain.run(["add-internet-password", "-a", "u", "-s", "example.com", "-w", "two", "--sync", "-U", "-l", "new"]).status == 0)
        #expect(try keychain.run(["find-internet-password", "-s", "example.com", "--sync", "yes", "-w"]).text == "two\n")
        #expect(try keychain.run(["find-internet-password", "-s", "example.com", "--sync", "yes", "-l", "new", "-w"]).text == "two\n")
    }
}

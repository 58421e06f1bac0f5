import Foundation
import Testing

/// `-w` given last, without a value, to `add-generic-password` or `add-internet-password`: the
/// password is typed without echo on a terminal (twice, the same), or read as one line of a pipe,
/// as macOS `security` does it; it never appears on the command line (design §7).
@Suite struct TypedPasswordTests {
    static let first = "password data for new item: "
    static let again = "retype password for new item: "

    @Test func onATerminalThePasswordIsAskedTwiceWithoutEcho() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        let added = try keychain.runOnTerminal(
            ["add-generic-password", "-a", "me", "-s", "svc", "-l", "typed", "-w"],
            steps: [.init(expect: Self.first, send: "s3cret typed\n"), .init(expect: Self.again, send: "s3cret typed\n")])
        #expect(added.missedPrompt == nil, "\(added.output)")
        #expect(added.status == 0, "\(added.output)")
        #expect(!added.output.contains("s3cret"), "the terminal echoed the password: \(added.output)")
        #expect(try keychain.run(["find-generic-password", "-a", "me", "-s", "svc", "-w"]).text == "s3cret typed\n")

        let internet = try keychain.runOnTerminal(
            ["add-internet-password", "-a", "me", "-s", "example.com", "-r", "htps", "-w"],
            steps: [.init(expect: Self.first, send: "web\n"), .init(expect: Self.again, send: "web\n")])
        #expect(internet.status == 0, "\(internet.output)")
        #expect(try keychain.run(["find-internet-password", "-s", "example.com", "-w"]).text == "web\n")
    }

    @Test func twoDifferentEntriesStoreNothing() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        let refused = try keychain.runOnTerminal(
            ["add-generic-password", "-a", "me", "-s", "svc", "-w"],
            steps: [.init(expect: Self.first, send: "one\n"), .init(expect: Self.again, send: "two\n")])
        #expect(refused.status == 1, "\(refused.output)")
        #expect(refused.output.contains("keychain: the two passwords typed differ; nothing was stored"), "\(refused.output)")
        #expect(!refused.output.contains("one") && !refused.output.contains("two\r"))
        #expect(try keychain.run(["find-generic-password", "-a", "me", "-s", "svc"]).status != 0)
    }

    @Test func fromAPipeTheFirstLineIsThePassword() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        let added = try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-w"], input: "piped -secret\nsecond line\n")
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout.isEmpty && added.stderr.isEmpty)
        #expect(try keychain.run(["find-generic-password", "-a", "me", "-s", "svc", "-w"]).text == "piped -secret\n")
        // Without a final newline, and with a Windows line ending.
        #expect(try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-U", "-w"], input: "last").status == 0)
        #expect(try keychain.run(["find-generic-password", "-a", "me", "-s", "svc", "-w"]).text == "last\n")
        #expect(try keychain.run(["add-internet-password", "-a", "me", "-s", "example.com", "-w"], input: "crlf\r\n").status == 0)
        #expect(try keychain.run(["find-internet-password", "-s", "example.com", "-w"]).text == "crlf\n")
    }

    @Test func nothingToReadIsAnError() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        // Standard input is /dev/null: empty, not a terminal.
        let empty = try keychain.run(["--keychain", keychain.path, "add-generic-password", "-a", "me", "-s", "svc", "-w"], keychainOption: false)
        #expect(empty.status == 1, "\(empty.stderr)")
        #expect(empty.stderr.hasPrefix("keychain: no password on standard input"))
        let missing = try keychain.run(["add-generic-password", "-a", "me", "-s", "svc"])
        #expect(missing.status == 64, "\(missing.stderr)")
        #expect(missing.stderr.contains("-w"))
    }

    @Test func aValueAfterDashWIsStillThePassword() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        // The value is the last token: -w takes it, nothing is asked (stdin is empty).
        #expect(try keychain.run(["--keychain", keychain.path, "add-generic-password", "-a", "me", "-s", "one", "-w", "-w"], keychainOption: false).status == 0)
        #expect(try keychain.run(["find-generic-password", "-s", "one", "-w"]).text == "-w\n")
        // -w as another option's value, last: that option's value, and -w is missing.
        let label = try keychain.run(["--keychain", keychain.path, "add-generic-password", "-a", "me", "-s", "two", "-l", "-w"], keychainOption: false)
        #expect(label.status == 64, "\(label.stderr)")
        // Given twice (a value, then last) is refused before anything is asked.
        let twice = try keychain.run(["add-generic-password", "-a", "me", "-s", "three", "-w", "x", "-w"], input: "y\n")
        #expect(twice.status == 64, "\(twice.stderr)")
        #expect(try keychain.run(["find-generic-password", "-s", "three"]).status == 44)
    }
}

import Foundation
import ProcessTesting
import Testing

/// `import --format pass` on entries that are not regular files, and a gpg that does not finish,
/// prints too much or outlives a killed `keychain`: the real binary and the real gpg.
@Suite struct PassImportBoundaryTests {
    /// What a `.gpg` entry of the store is, other than a regular file.
    enum Odd: String, CaseIterable {
        case fifo, linkToDevZero, linkOutsideTheStore, linkToNothing

        var reason: String {
            switch self {
            case .fifo: "not a regular file (a FIFO)"
            case .linkToDevZero: "a link to a file outside the store"
            case .linkOutsideTheStore: "a link to a file outside the store"
            case .linkToNothing: "a link to nothing"
            }
        }

        func make(at path: String, outside: String) throws {
            switch self {
            case .fifo: try #require(mkfifo(path, 0o600) == 0)
            case .linkToDevZero: try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "/dev/zero")
            case .linkOutsideTheStore: try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: outside)
            case .linkToNothing: try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: path + ".gone")
            }
        }
    }

    /// The keychain's files, to compare before and after.
    func snapshot(_ keychain: KeychainProcess) -> [Data?] {
        [keychain.path, keychain.path + "-wal", keychain.path + ".devicekey"].map { FileManager.default.contents(atPath: $0) }
    }

    /// Such an entry holds no password pass could have written: it is skipped with its name and
    /// why (one line each on stderr), counted as skipped, and gpg never reads it. Before, gpg
    /// waited on the FIFO, or read /dev/zero, for ever. Nothing stored changes.
    @Test(arguments: Odd.allCases)
    func anEntryThatIsNotARegularFileIsSkippedWithItsNameAndReason(odd: Odd) throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        let fixture = try PassFixture(keychain)
        #expect(try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-w", "pw"]).status == 0)
        let outside = keychain.directory.appendingPathComponent("outside.gpg").path
        try Data("not an entry".utf8).write(to: URL(fileURLWithPath: outside))
        let entry = fixture.store.appendingPathComponent("web/odd.gpg").path
        try FileManager.default.createDirectory(atPath: (entry as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try odd.make(at: entry, outside: outside)
        defer { Self.release(entry, odd: odd, mentioning: keychain.directory.path) }
        let before = snapshot(keychain)

        let result = try keychain.run(["import", "--format", "pass", fixture.store.path], timeout: .seconds(20))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.text == "imported 0, updated 0, unchanged 0, skipped 1\n")
        #expect(result.stderr == "keychain: skipped pass entry web/odd: \(odd.reason)\n")
        #expect(snapshot(keychain) == before)
        #expect(try keychain.run(["find-generic-password", "-a", "me", "-s", "svc", "-w"]).text == "pw\n")
    }

    /// A link to a regular file inside the store (an alias) is read like the file itself.
    @Test func aLinkToAnEntryInsideTheStoreIsRead() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        let fixture = try PassFixture(keychain)
        defer { fixture.stopAgents() }
        try fixture.makeKey()
        try fixture.add("web/shop", Data("pw\nlogin: me\n".utf8))
        try FileManager.default.createSymbolicLink(
            atPath: fixture.store.appendingPathComponent("alias.gpg").path, withDestinationPath: "web/shop.gpg")
        let result = try keychain.run(["import", "--format", "pass", fixture.store.path], environment: ["GNUPGHOME": fixture.home.path])
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
        #expect(result.text == "imported 2, updated 0, unchanged 0, skipped 0\n")
        #expect(try keychain.run(["find-generic-password", "-s", "alias", "-a", "me", "-w"]).text == "pw\n")
    }

    /// gpg waiting for an agent that never answers is killed at `$KEYCHAIN_GPG_TIMEOUT`, the
    /// import refused with the entry's name, nothing stored, and no gpg left running. Before,
    /// `keychain` waited for ever.
    @Test func gpgThatDoesNotFinishIsKilledAtTheTimeoutAndNothingIsImported() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        let fixture = try PassFixture(keychain)
        defer { fixture.stopAgents() }
        try fixture.makeKey()
        try fixture.add("web/shop", Data("pw\n".utf8))
        let agent = try fixture.makeStuckHome()
        let marker = "GNUPGHOME=" + fixture.stuckHome.path
        defer {
            agent.close()
            ProcessTable.stop(ProcessTable.processes(withEnvironment: marker))
        }
        #expect(try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-w", "pw"]).status == 0)
        let before = snapshot(keychain)

        let started = ContinuousClock.now
        let result = try keychain.run(
            ["import", "--format", "pass", fixture.store.path], environment: ["GNUPGHOME": fixture.stuckHome.path, "KEYCHAIN_GPG_TIMEOUT": "1"],
            timeout: .seconds(30))
        #expect(ContinuousClock.now - started < .seconds(20))
        #expect(result.status != 0 && result.status != 44)
        #expect(result.stderr.hasPrefix("keychain: pass entry web/shop: gpg did not finish within 1"), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(snapshot(keychain) == before)
        #expect(ProcessTable.processes(withEnvironment: marker).isEmpty)
    }

    /// `keychain` killed with SIGKILL while gpg waits: the kernel kills gpg too (its parent-death
    /// signal). Before, gpg was left waiting for ever.
    @Test func gpgDiesWithAKilledKeychain() async throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        let fixture = try PassFixture(keychain)
        defer { fixture.stopAgents() }
        try fixture.makeKey()
        try fixture.add("web/shop", Data("pw\n".utf8))
        let agent = try fixture.makeStuckHome()
        let marker = "GNUPGHOME=" + fixture.stuckHome.path
        defer {
            agent.close()
            ProcessTable.stop(ProcessTable.processes(withEnvironment: marker))
        }
        let importing = try ChildProcess(
            KeychainProcess.binary, ["import", "--format", "pass", fixture.store.path, "--keychain", keychain.path],
            // keychain's own limit on gpg far past the test's wait: on a loaded machine the test
            // once saw gpg only after keychain had given up on it.
            environment: ["HOME": keychain.directory.path, "GNUPGHOME": fixture.stuckHome.path, "KEYCHAIN_GPG_TIMEOUT": "600"])
        defer { importing.stop() }
        var gpg: [ProcessTable.Process] = []
        try await eventually(timeout: .seconds(120), "gpg to start under keychain") {
            gpg = ProcessTable.children(of: importing.pid).filter { ProcessTable.processes(withEnvironment: marker).contains($0) }
            return !gpg.isEmpty || !importing.isRunning
        }
        try #require(!gpg.isEmpty, "keychain ended first: \(importing.stderr)")

        importing.signal(SIGKILL)
        try await eventually(timeout: .seconds(10), "gpg to end with keychain") { !gpg.contains(where: ProcessTable.isRunning) }
    }

    /// gpg printing more than 1 MiB (a compressed entry of 4 MiB of zeros) is stopped there and
    /// the import refused with the entry's name; nothing is stored.
    @Test func gpgPrintingMoreThanOneMebibyteIsStoppedAndNothingIsImported() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        let fixture = try PassFixture(keychain)
        defer { fixture.stopAgents() }
        try fixture.makeKey()
        try fixture.add("big", Data(count: 4 << 20))
        #expect(try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-w", "pw"]).status == 0)
        let before = snapshot(keychain)
        let result = try keychain.run(["import", "--format", "pass", fixture.store.path], environment: ["GNUPGHOME": fixture.home.path])
        #expect(result.status != 0 && result.status != 44)
        #expect(result.stderr == "keychain: pass entry big: gpg printed more than 1048576 bytes\n")
        #expect(snapshot(keychain) == before)
    }

    /// Ends what a `keychain` without these checks left behind: a gpg blocked opening the FIFO
    /// (opened here for writing, it reads the end), or reading /dev/zero (killed by its command
    /// line, which names the entry).
    static func release(_ entry: String, odd: Odd, mentioning directory: String) {
        if odd == .fifo {
            let writer = open(entry, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
            if writer >= 0 { close(writer) }
        }
        ProcessTable.stop(ProcessTable.mentioning(directory))
    }
}

#if SYNCKEYCHAIN_NETWORK
import Foundation

/// Shared groups with real processes (decision 0295) against the same work inside one account:
/// a member's new device's first sync of a group of `groupItems` items, against a new device's
/// first sync of an account of as many items; and sharing one item (add to the group's keychain,
/// the writer's sync, the other member's sync that reads it) against the same item added to an
/// account and read on its other device.
enum GroupSyncFigures {
    static let benchmark = Benchmark(
        name: "group sync",
        rows: [
            .init(name: "member's first sync of a group", unit: "s", target: .timeRatioAtMost(2)),
            .init(name: "sharing an item", unit: "s", target: .timeRatioAtMost(2)),
        ]
    ) { scale, directory in
        let executables = try Executables.located()
        let server = try await BenchServer(executables, directory: directory)
        defer { server.stop() }
        let suffix = UUID().uuidString.prefix(8).lowercased()
        // Alice owns the group, Bob is its member, Carol's account holds the same items alone.
        let alice = DeviceRunner(executables: executables, server: server, account: "alice-\(suffix)", directory: directory)
        let bob = DeviceRunner(executables: executables, server: server, account: "bob-\(suffix)", directory: directory)
        let carol = DeviceRunner(executables: executables, server: server, account: "carol-\(suffix)", directory: directory)
        let a = try alice.newKeychainPath("group-a"), b = try bob.newKeychainPath("group-b")
        let c = try carol.newKeychainPath("group-c"), c2 = try carol.newKeychainPath("group-c2")
        progress("three accounts, a group of two")
        try alice.enrol(keychain: a, name: "a", createWithLogN: scale.kdfLogN)
        try bob.enrol(keychain: b, name: "b", createWithLogN: scale.kdfLogN)
        try carol.enrol(keychain: c, name: "c", createWithLogN: scale.kdfLogN)
        try carol.enrol(keychain: c2, name: "c2")
        let yes = directory.appendingPathComponent("yes.txt")
        try Data("y\n".utf8).write(to: yes)
        try alice.client(["contacts", "add", "--keychain", a, bob.account], input: yes)
        try bob.client(["contacts", "add", "--keychain", b, alice.account], input: yes)
        try alice.client(["group", "create", "--keychain", a, "family"])
        try alice.client(["group", "invite", "--keychain", a, "family", bob.account])
        try bob.client(["group", "accept", "--keychain", b, "--yes", "--name", "alices"])

        let items = scale.groupItems
        progress("\(items) items in the group and in Carol's account")
        let logins = directory.appendingPathComponent("logins.csv")
        let rows = (0..<items).map { "site\($0),https://site\($0).example/,user\($0),password-\($0)-\(UUID().uuidString)" }
        try Data((["name,url,username,password"] + rows).joined(separator: "\n").utf8).write(to: logins)
        try alice.keychain(["import", "--keychain", a, "--group", "family", "--format", "chrome-csv", logins.path])
        try carol.keychain(["import", "--keychain", c, "--sync", "--format", "chrome-csv", logins.path])
        _ = try alice.syncOnce(keychain: a)
        _ = try carol.syncOnce(keychain: c)
        _ = try bob.syncOnce(keychain: b)
        _ = try carol.syncOnce(keychain: c2)

        progress("timing \(scale.deviceSamples) first syncs of each")
        /// A new device of `runner`'s account, enrolled, then timed through its first sync; one
        /// item read afterwards (`reading` says where) proves the sync brought them.
        func firstSync(_ runner: DeviceRunner, _ sample: Int, reading: [String]) throws -> Double {
            let keychain = try runner.newKeychainPath("first-\(runner.account)-\(sample)")
            try runner.enrol(keychain: keychain, name: "first-\(sample)")
            let start = ContinuousClock.now
            _ = try runner.syncOnce(keychain: keychain)
            let time = (ContinuousClock.now - start).seconds
            let read = try runner.keychain(["find-internet-password", "--keychain", keychain, "-s", "site7.example", "-w"] + reading)
            guard read.hasPrefix("password-7-") else { throw BenchmarkError("the first sync did not bring the items: \(read)") }
            return time
        }
        var memberFirst: [Double] = [], accountFirst: [Double] = []
        for sample in 0..<scale.deviceSamples {
            memberFirst.append(try firstSync(bob, sample, reading: ["--group", "alices"]))
            accountFirst.append(try firstSync(carol, sample, reading: ["--sync", "yes"]))
        }

        progress("timing \(scale.deviceSamples * 2) shared items")
        var shared: [Double] = [], own: [Double] = []
        for sample in 0..<(scale.deviceSamples * 2) {
            var start = ContinuousClock.now
            try alice.keychain(["add-generic-password", "--keychain", a, "--group", "family", "-s", "shared-\(sample)", "-a", "x", "-w", "s\(sample)"])
            _ = try alice.syncOnce(keychain: a)
            _ = try bob.syncOnce(keychain: b)
            let read = try bob.keychain(["find-generic-password", "--keychain", b, "--group", "alices", "-s", "shared-\(sample)", "-w"])
            shared.append((ContinuousClock.now - start).seconds)
            guard read == "s\(sample)\n" else { throw BenchmarkError("the shared item did not arrive: \(read)") }
            start = ContinuousClock.now
            try carol.add(keychain: c, service: "own-\(sample)", account: "x", password: "o\(sample)")
            _ = try carol.syncOnce(keychain: c)
            _ = try carol.syncOnce(keychain: c2)
            let own2 = try carol.find(keychain: c2, service: "own-\(sample)", account: "x", sync: true)
            own.append((ContinuousClock.now - start).seconds)
            guard own2 == "o\(sample)" else { throw BenchmarkError("the account's item did not arrive: \(own2)") }
        }
        return [
            Figure(
                name: "member's first sync of a \(items)-item group", unit: "s", product: Statistics(memberFirst),
                baselineName: "a new device's first sync of a \(items)-item account", baseline: Statistics(accountFirst),
                target: .timeRatioAtMost(2),
                note: "one sync-client sync each, after enrolment; the member's also verifies the group's log and its writers' cards"),
            Figure(
                name: "sharing an item (add to the group, writer's sync, member's sync, read)", unit: "s", product: Statistics(shared),
                baselineName: "the same inside one account (add, sync, other device's sync, read)", baseline: Statistics(own),
                target: .timeRatioAtMost(2), note: "five processes each; the group's side syncs the account's zones and the group's two"),
        ]
    }
}

extension DeviceRunner {
    /// `sync-client ARGUMENTS…` (the account's password in the environment, `input` as standard input).
    @discardableResult
    func client(_ arguments: [String], input: URL? = nil) throws -> String {
        try ChildProcess.run(
            executables.client, arguments, environment: ["SYNC_PASSWORD": BenchAccount.password], input: input,
            log: directory.appendingPathComponent("client.log"))
    }

    /// `keychain ARGUMENTS…`; returns its standard output.
    @discardableResult
    func keychain(_ arguments: [String]) throws -> String {
        try ChildProcess.run(executables.keychain, arguments, log: directory.appendingPathComponent("client.log"))
    }
}
#endif

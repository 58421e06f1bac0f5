import Foundation

/// The CLI against other command-line password stores on the same machine in the same run: adds
/// and lookups per second, one process per operation, as a user's script runs them (issue 16).
/// Each competitor runs in a private home, keyring and GnuPG directory under the benchmark's
/// temporary directory; its daemons are stopped at the end.
enum CompetitorFigures {
    /// One competitor: how to set it up, add an item and look it up.
    struct Tool {
        var add: (Int) throws -> Void
        var lookup: (Int) throws -> Void
    }

    static let service = "com.example.bench"
    static let secret = "correct horse battery staple"

    static let secretTool = figure(
        "CLI adds + lookups/s vs secret-tool (gnome-keyring)", competitor: "secret-tool", target: 2
    ) { directory, log in
        let secretTool = try ProductBinary.onPath("secret-tool", package: "libsecret-tools")
        let (environment, stop) = try await gnomeKeyring(directory, log: log)
        let value = try inputFile(directory, "secret-tool-secret", secret)
        let tool = Tool(
            add: { index in
                _ = try ChildProcess.run(
                    secretTool, ["store", "--label=bench", "service", service, "account", "a\(index)"], environment: environment, input: value, log: log)
            },
            lookup: { index in
                let output = try ChildProcess.run(secretTool, ["lookup", "service", service, "account", "a\(index)"], environment: environment, log: log)
                guard output.hasPrefix(secret) else { throw BenchmarkError("secret-tool lookup found no secret") }
            })
        return (tool, stop)
    }

    /// A private session bus without service activation, its configuration under `directory`:
    /// its daemon and its address. (The session bus's own configuration would start a second
    /// gnome-keyring-daemon for the first `secret-tool` call made before the one started here
    /// registered, and the two fought over the keyring.)
    static func privateBus(_ directory: URL, log: URL) async throws -> (daemon: ChildProcess, address: String) {
        let dbus = try ProductBinary.onPath("dbus-daemon", package: "dbus")
        let configuration = directory.appendingPathComponent("bus-\(UUID().uuidString.prefix(8)).conf")
        let socket = directory.appendingPathComponent("bus-\(UUID().uuidString.prefix(8))").path
        try """
            <busconfig><type>session</type><listen>unix:path=\(socket)</listen><auth>EXTERNAL</auth>
            <policy context="default"><allow send_destination="*"/><allow receive_sender="*"/><allow own="*"/></policy></busconfig>
            """.write(to: configuration, atomically: true, encoding: .utf8)
        let bus = try ChildProcess(dbus, ["--config-file=\(configuration.path)", "--nofork", "--print-address=1"], log: log)
        do {
            return (bus, try await bus.line(startingWith: "unix:", within: .seconds(10)))
        } catch {
            bus.stop()
            throw error
        }
    }

    /// gnome-keyring-daemon on a private bus, in a private home under `directory`, its login
    /// keyring unlocked, once `secret-tool store` reaches it (a probe item, account `a-1`): the
    /// environment a client needs, and how to stop both daemons.
    static func gnomeKeyring(_ directory: URL, log: URL) async throws -> (environment: [String: String], stop: @Sendable () -> Void) {
        let secretTool = try ProductBinary.onPath("secret-tool", package: "libsecret-tools")
        let keyringDaemon = try ProductBinary.onPath("gnome-keyring-daemon", package: "gnome-keyring")
        let home = directory.appendingPathComponent("secret-tool-home")
        try FileManager.default.createDirectory(at: home.appendingPathComponent("run"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let (bus, address) = try await privateBus(directory, log: log)
        var started = [bus]
        // Whatever fails below, the daemons started so far are stopped.
        var ready = false
        defer { if !ready { started.forEach { $0.stop() } } }
        let environment = [
            "DBUS_SESSION_BUS_ADDRESS": address, "HOME": home.path, "XDG_DATA_HOME": home.appendingPathComponent("data").path,
            "XDG_RUNTIME_DIR": home.appendingPathComponent("run").path,
        ]
        let password = try inputFile(directory, "keyring-password", "bench")
        let keyring = try ChildProcess(keyringDaemon, ["--unlock", "--components=secrets", "--foreground"], environment: environment, input: password, log: log)
        started.append(keyring)
        let probe = try inputFile(directory, "secret-tool-probe", secret)
        // The keyring answers once the daemon has registered on the bus: poll with a deadline.
        let deadline = ContinuousClock.now + .seconds(15)
        while (try? ChildProcess.run(
            secretTool, ["store", "--label=bench", "service", service, "account", "a-1"], environment: environment, input: probe, log: log)) == nil
        {
            guard ContinuousClock.now < deadline else { throw BenchmarkError("gnome-keyring did not answer within 15 s") }
            try await Task.sleep(for: .milliseconds(20))
        }
        ready = true
        return (environment, { keyring.stop(); bus.stop() })
    }

    static let pass = figure("CLI adds + lookups/s vs pass", competitor: "pass", target: 10) { directory, log in
        let pass = try ProductBinary.onPath("pass", package: "pass")
        let gpg = try ProductBinary.onPath("gpg", package: "gnupg")
        let gpgconf = try ProductBinary.onPath("gpgconf", package: "gnupg")
        let gnupg = directory.appendingPathComponent("gnupg")
        try FileManager.default.createDirectory(at: gnupg, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let environment = [
            "GNUPGHOME": gnupg.path, "PASSWORD_STORE_DIR": directory.appendingPathComponent("pass-store").path,
            "HOME": directory.path,
        ]
        _ = try ChildProcess.run(gpg, ["--batch", "--passphrase", "", "--quick-gen-key", "bench@example.org", "default", "default", "never"], environment: environment, log: log)
        _ = try ChildProcess.run(pass, ["init", "bench@example.org"], environment: environment, log: log)
        let value = try inputFile(directory, "pass-secret", secret + "\n")
        let tool = Tool(
            add: { index in _ = try ChildProcess.run(pass, ["insert", "-m", "-f", "bench/a\(index)"], environment: environment, input: value, log: log) },
            lookup: { index in
                let output = try ChildProcess.run(pass, ["show", "bench/a\(index)"], environment: environment, log: log)
                guard output.hasPrefix(secret) else { throw BenchmarkError("pass show found no secret") }
            })
        return (tool, { _ = try? ChildProcess.run(gpgconf, ["--kill", "all"], environment: environment, log: log) })
    }

    static let keepassxc = figure(
        "CLI adds + lookups/s vs keepassxc-cli", competitor: "keepassxc-cli (KDF at its 100 ms minimum)", target: 10
    ) { directory, log in
        let cli = try ProductBinary.onPath("keepassxc-cli", package: "keepassxc")
        let database = directory.appendingPathComponent("bench.kdbx").path
        let environment = ["HOME": directory.path]
        _ = try ChildProcess.run(
            cli, ["db-create", "--set-password", "--decryption-time", "100", database], environment: environment,
            input: try inputFile(directory, "kdbx-create", "dbpw\ndbpw\n"), log: log)
        let addInput = try inputFile(directory, "kdbx-add", "dbpw\n\(secret)\n")
        let showInput = try inputFile(directory, "kdbx-show", "dbpw\n")
        let tool = Tool(
            add: { index in
                _ = try ChildProcess.run(cli, ["add", "-q", "-u", "a\(index)", "-p", database, "e\(index)"], environment: environment, input: addInput, log: log)
            },
            lookup: { index in
                let output = try ChildProcess.run(cli, ["show", "-q", "-s", "-a", "Password", database, "e\(index)"], environment: environment, input: showInput, log: log)
                guard output.hasPrefix(secret) else { throw BenchmarkError("keepassxc-cli show found no secret") }
            })
        return (tool, {})
    }

    /// A figure: the same number of adds then lookups with `keychain` and the competitor,
    /// alternating samples; operations per second.
    static func figure(
        _ name: String, competitor: String, target: Double,
        setUp: @escaping @Sendable (URL, URL) async throws -> (Tool, () -> Void)
    ) -> Benchmark {
        let row = Benchmark.Row(name: name, unit: "ops/s", target: .throughputRatioAtLeast(target))
        let ceilingRow = Benchmark.Row(name: "\(name): sqlite3 itself", unit: "ops/s", target: .report)
        return Benchmark(name: name, rows: [row, ceilingRow]) { scale, directory in
            let log = directory.appendingPathComponent("competitor.log")
            let keychainBinary = try ProductBinary.located("keychain")
            let keychain = directory.appendingPathComponent("cli.keychain").path
            let product = Tool(
                add: { index in
                    _ = try ChildProcess.run(
                        keychainBinary, ["add-generic-password", "--keychain", keychain, "-s", service, "-a", "a\(index)", "-w", secret], log: log)
                },
                lookup: { index in
                    let output = try ChildProcess.run(
                        keychainBinary, ["find-generic-password", "--keychain", keychain, "-s", service, "-a", "a\(index)", "-w"], log: log)
                    guard output == secret + "\n" else { throw BenchmarkError("keychain find printed the wrong secret") }
                })
            // A competitor that cannot be set up here is a row saying so, not a broken benchmark.
            let (baseline, stop): (Tool, () -> Void)
            do {
                (baseline, stop) = try await setUp(directory, log)
            } catch let unavailable as BenchmarkUnavailable {
                throw unavailable
            } catch {
                throw BenchmarkUnavailable("\(competitor) could not be set up: \(error)")
            }
            defer { stop() }
            let sqlite = try sqliteTool(directory, log: log)
            var productRates: [Double] = []
            var baselineRates: [Double] = []
            var sqliteRates: [Double] = []
            // Ten adds and ten lookups per sample in a full run: with five, one slow process
            // on a loaded machine moved a sample's rate by a fifth.
            let operations = max(2, scale.processRuns)
            for sample in 0..<min(scale.samples, 5) {
                let first = sample * operations
                baselineRates.append(try rate(baseline, from: first, count: operations))
                productRates.append(try rate(product, from: first, count: operations))
                sqliteRates.append(try rate(sqlite, from: first, count: operations))
            }
            let note = "\(operations) adds then \(operations) lookups per sample, a process each"
            return [
                Figure(
                    name: name, unit: "ops/s", product: Statistics(productRates), baselineName: competitor,
                    baseline: Statistics(baselineRates), target: row.target, note: note),
                Figure(
                    name: ceilingRow.name, unit: "ops/s", product: Statistics(sqliteRates), baselineName: competitor,
                    baseline: Statistics(baselineRates), target: ceilingRow.target,
                    note: "the same samples: what a store of one sqlite3 process per operation reaches (durable insert, select)"),
            ]
        }
    }

    /// `sqlite3` processes doing the database work alone, one per operation: an insert made
    /// durable as the keychain's is (WAL, `synchronous = FULL`), a select of the row. The most
    /// any keychain CLI of one process per operation over SQLite could reach on this machine.
    static func sqliteTool(_ directory: URL, log: URL) throws -> Tool {
        let sqlite = try ProductBinary.onPath("sqlite3", package: "sqlite3")
        let database = directory.appendingPathComponent("ceiling.sqlite").path
        _ = try ChildProcess.run(
            sqlite, [database, "PRAGMA journal_mode = WAL; CREATE TABLE item (svce TEXT, acct TEXT, data TEXT, UNIQUE (svce, acct));"], log: log)
        return Tool(
            add: { index in
                _ = try ChildProcess.run(
                    sqlite, [database, "PRAGMA synchronous = FULL; INSERT INTO item VALUES ('\(service)', 'a\(index)', '\(secret)');"], log: log)
            },
            lookup: { index in
                let output = try ChildProcess.run(sqlite, [database, "SELECT data FROM item WHERE svce = '\(service)' AND acct = 'a\(index)';"], log: log)
                guard output == secret + "\n" else { throw BenchmarkError("sqlite3 found no row") }
            })
    }

    /// Adds `count` items, then looks each up: operations per second.
    static func rate(_ tool: Tool, from first: Int, count: Int) throws -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        for index in first..<(first + count) { try tool.add(index) }
        for index in first..<(first + count) { try tool.lookup(index) }
        return Double(2 * count) / (clock.now - start).seconds
    }

    /// A file holding what a tool reads on standard input (never a real secret).
    static func inputFile(_ directory: URL, _ name: String, _ text: String) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url
    }
}

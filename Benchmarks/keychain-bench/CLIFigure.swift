import Foundation

/// `keychain` processes, start to exit, against `sqlite3` processes doing the same database work
/// on the same file: `find-generic-password -w` against a `sqlite3` select of the same row's
/// sealed secret by its key index (the attributes are sealed, decision 0280), and `add-generic-password` against a `sqlite3` insert of one row (WAL,
/// `synchronous = FULL`, like the keychain). The gap is what a keychain process adds to SQLite's
/// own: loading itself, reading its arguments, opening, unsealing (decision 0160).
enum CLIFigure {
    static let findRow = Benchmark.Row(name: "CLI find -w process", unit: "ms", target: .timeRatioAtMost(3))
    static let addRow = Benchmark.Row(name: "CLI add process", unit: "ms", target: .timeRatioAtMost(3))
    static let service = "com.example.bench"

    static let benchmark = Benchmark(name: "CLI find -w and add", rows: [findRow, addRow]) { scale, directory in
        let keychainBinary = try ProductBinary.located("keychain")
        let sqlite = try ProductBinary.onPath("sqlite3", package: "sqlite3")
        let keychain = directory.appendingPathComponent("cli.keychain").path
        let log = directory.appendingPathComponent("cli.log")
        _ = try ChildProcess.run(keychainBinary, ["add-generic-password", "--keychain", keychain, "-s", service, "-a", "cli", "-w", "secret"], log: log)
        // The row's blind index, read once: what the keychain computes from the query's attributes.
        let keyIndex = try ChildProcess.run(sqlite, [keychain, "SELECT hex(key_index) FROM item WHERE class = 'genp' LIMIT 1;"], log: log)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let select = "SELECT hex(sealed_data) FROM item WHERE key_index = x'\(keyIndex)';"
        let sampler = TimeSampler(samples: scale.samples, iterations: scale.processRuns)
        let (find, select1) = try await sampler.compare(
            product: { _ in
                let output = try ChildProcess.run(
                    keychainBinary, ["find-generic-password", "--keychain", keychain, "-s", service, "-a", "cli", "-w"], log: log)
                guard output == "secret\n" else { throw BenchmarkError("keychain find printed \(output.debugDescription)") }
            },
            baseline: { _ in
                let output = try ChildProcess.run(sqlite, [keychain, select], log: log)
                guard output.count > 20 else { throw BenchmarkError("sqlite3 found no row") }
            })

        let plain = directory.appendingPathComponent("plain.sqlite").path
        _ = try ChildProcess.run(
            sqlite, [plain, "PRAGMA journal_mode = WAL; CREATE TABLE item (svce TEXT, acct TEXT, data BLOB, UNIQUE (svce, acct));"], log: log)
        let (add, insert) = try await sampler.compare(
            product: { index in
                _ = try ChildProcess.run(
                    keychainBinary, ["add-generic-password", "--keychain", keychain, "-s", service, "-a", "add-\(index)", "-w", "secret"], log: log)
            },
            baseline: { index in
                _ = try ChildProcess.run(
                    sqlite, [plain, "PRAGMA synchronous = FULL; INSERT INTO item VALUES ('\(service)', 'add-\(index)', randomblob(60));"], log: log)
            })
        return [
            Figure(
                name: findRow.name, unit: "ms", product: find, baselineName: "sqlite3 process selecting the same row", baseline: select1,
                target: findRow.target, note: "posix_spawn to waitpid"),
            Figure(
                name: addRow.name, unit: "ms", product: add, baselineName: "sqlite3 process inserting one row (WAL, FULL)", baseline: insert,
                target: addRow.target, note: "posix_spawn to waitpid"),
        ]
    }
}

import ArgumentParser
import Foundation

/// `keychain-bench`: every performance figure of SyncKeychain as a ratio against a baseline
/// measured in the same run. Prints a Markdown table and writes a JSON file.
@main
struct KeychainBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keychain-bench",
        abstract: "Measure SyncKeychain against baselines taken in the same run."
    )

    @Flag(help: "A short run (under a minute) that checks the benchmark works; its numbers are not judged.")
    var quick = false

    @Option(help: "Where to write the JSON results.")
    var json = "bench-results/latest.json"

    @Option(help: "Only run figures whose name contains this text.")
    var filter: String?

    func run() async throws {
        let scale = quick ? Scale.quick : Scale.full
        var figures: [Figure] = []
        var failures: [String] = []
        for benchmark in FigureCatalog.all where filter.map({ benchmark.name.contains($0) }) ?? true {
            print("measuring: \(benchmark.name)")
            let started = ContinuousClock.now
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("keychain-bench-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            do {
                figures += try await benchmark.measure(scale, directory)
            } catch let unavailable as BenchmarkUnavailable {
                print("  not run: \(unavailable.reason)")
                figures += benchmark.rows.map { .notRun($0.name, unit: $0.unit, target: $0.target, reason: unavailable.reason) }
            } catch {
                // A broken figure still leaves the others' numbers; the run then exits non-zero.
                print("  failed: \(error)")
                Self.printLogTails(in: directory)
                failures.append(benchmark.name)
                figures += benchmark.rows.map { .notRun($0.name, unit: $0.unit, target: $0.target, reason: "failed: \(error)") }
            }
            // Where a run's time goes: CI runs the quick pass on every change.
            print("  took \(format((ContinuousClock.now - started).seconds, digits: 1)) s")
        }
        let report = Report(machine: Report.describeMachine(), mode: quick ? "quick" : "full", figures: figures)
        print()
        print("machine: \(report.machine) (\(report.mode) run)")
        print(report.table())
        try report.write(to: json)
        print("\nwritten: \(json)")
        if !failures.isEmpty {
            print("failed: \(failures.joined(separator: ", "))")
            throw ExitCode.failure
        }
    }
}

extension KeychainBench {
    /// The last lines of the child processes' logs, to see why a figure failed.
    static func printLogTails(in directory: URL) {
        let logs = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in logs.sorted() where name.hasSuffix(".log") {
            let text = (try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)) ?? ""
            let tail = text.split(separator: "\n").suffix(8)
            guard !tail.isEmpty else { continue }
            print("  \(name):")
            tail.forEach { print("    \($0)") }
        }
    }
}

/// How long each figure runs, and how large its data is.
struct Scale: Sendable {
    var samples: Int
    var iterations: Int
    /// Items in the lookup figure's keychain and in each Secret Service provider's collection
    /// (filled a `secret-tool` process each: most of a quick pass's time at 1,000).
    var items: Int
    /// Samples of the server-writes figures, and batches of 200 items per uploader in each.
    var writeSamples: Int
    var writeBatches: Int
    /// Items in the large account of the changes-since-cursor figure.
    var feedItems: Int
    /// Items a new device pulls (and the daemon whose memory is read), and how many new devices.
    var deviceItems: Int
    var deviceSamples: Int
    /// Items in the shared group a member's new device pulls (and in the account it is compared with).
    var groupItems: Int
    /// log2 of scrypt's N for the new-device account (the product's default in a full run).
    var kdfLogN: UInt8
    /// Writes timed by the propagation figure.
    var propagationWrites: Int
    /// Processes per sample in the CLI figure.
    var processRuns: Int
    /// Hostile connections held open beside the legitimate devices of the hostile-connections
    /// figure, those devices (accounts of a writer and a push subscriber), and the rounds of one
    /// write per account timed with and without the hostile connections.
    var hostileConnections: Int
    var hostileAccounts: Int
    var hostileRounds: Int
    /// The pause between two rounds: a full run's hostile phase outlasts the server's header
    /// timeout (30 s), so its trickling and silent connections are closed and come back.
    var hostileRoundPause: Duration

    static let quick = Scale(
        samples: 3, iterations: 200, items: 100, writeSamples: 2, writeBatches: 1, feedItems: 2_000, deviceItems: 500,
        deviceSamples: 1, groupItems: 100, kdfLogN: 15, propagationWrites: 5, processRuns: 3, hostileConnections: 100,
        hostileAccounts: 4, hostileRounds: 10, hostileRoundPause: .zero)
    static let full = Scale(
        samples: 15, iterations: 2_000, items: 10_000, writeSamples: 7, writeBatches: 10, feedItems: 100_000, deviceItems: 10_000,
        deviceSamples: 5, groupItems: 1_000, kdfLogN: 17, propagationWrites: 50, processRuns: 10, hostileConnections: 1_000,
        hostileAccounts: 10, hostileRounds: 100, hostileRoundPause: .milliseconds(400))
}

/// One named measurement in the catalog: one or more table rows from one setup.
struct Benchmark: Sendable {
    /// The rows a benchmark fills, named up front so that a benchmark that cannot run still
    /// appears in the table.
    struct Row: Sendable {
        var name: String
        var unit: String
        var target: Figure.Target
    }

    var name: String
    var rows: [Row]
    var measure: @Sendable (Scale, URL) async throws -> [Figure]

    init(name: String, rows: [Row] = [], measure: @escaping @Sendable (Scale, URL) async throws -> [Figure]) {
        self.name = name
        self.rows = rows
        self.measure = measure
    }

    /// A benchmark of a single row.
    init(name: String, measure: @escaping @Sendable (Scale, URL) async throws -> Figure) {
        self.init(name: name) { scale, directory in [try await measure(scale, directory)] }
    }
}

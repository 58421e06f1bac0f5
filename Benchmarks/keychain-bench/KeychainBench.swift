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
        for benchmark in FigureCatalog.all where filter.map({ benchmark.name.contains($0) }) ?? true {
            print("measuring: \(benchmark.name)")
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("keychain-bench-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            figures.append(try await benchmark.measure(scale, directory))
        }
        let report = Report(machine: Report.describeMachine(), mode: quick ? "quick" : "full", figures: figures)
        print()
        print("machine: \(report.machine) (\(report.mode) run)")
        print(report.table())
        try report.write(to: json)
        print("\nwritten: \(json)")
    }
}

/// How long each figure runs.
struct Scale: Sendable {
    var samples: Int
    var iterations: Int
    var items: Int

    static let quick = Scale(samples: 3, iterations: 200, items: 1_000)
    static let full = Scale(samples: 15, iterations: 2_000, items: 10_000)
}

/// One named measurement in the catalog.
struct Benchmark: Sendable {
    var name: String
    var measure: @Sendable (Scale, URL) async throws -> Figure
}

#if SYNCKEYCHAIN_NETWORK
import Foundation

/// A `keychain find-generic-password -w` process, start to exit, against a do-nothing binary that
/// links the same modules (`keychain-bench-noop`): what the CLI adds over loading itself.
enum CLIFigure {
    static let row = Benchmark.Row(name: "CLI find -w process", unit: "ms", target: .timeRatioAtMost(2))

    static let benchmark = Benchmark(name: "CLI find -w", rows: [row]) { scale, directory in
        let executables = try Executables.located()
        let keychain = directory.appendingPathComponent("cli.keychain").path
        let log = directory.appendingPathComponent("cli.log")
        _ = try ChildProcess.run(
            executables.keychain, ["add-generic-password", "--keychain", keychain, "-s", "com.example.bench", "-a", "cli", "-w", "secret"], log: log)
        let sampler = TimeSampler(samples: scale.samples, iterations: scale.processRuns)
        let (product, baseline) = try await sampler.compare(
            product: { _ in
                let output = try ChildProcess.run(
                    executables.keychain, ["find-generic-password", "--keychain", keychain, "-s", "com.example.bench", "-a", "cli", "-w"], log: log)
                guard output == "secret\n" else { throw BenchmarkError("keychain find printed \(output.debugDescription)") }
            },
            baseline: { _ in _ = try ChildProcess.run(executables.noop, [], log: log) })
        return [Figure(
            name: "CLI find -w process", unit: "ms", product: product,
            baselineName: "do-nothing binary, same modules", baseline: baseline, target: row.target,
            note: "posix_spawn to waitpid")]
    }
}
#endif

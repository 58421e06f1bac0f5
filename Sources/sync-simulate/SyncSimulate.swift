import ArgumentParser
import Foundation
import SyncSimulation
#if canImport(ShippedSimulation)
import ShippedSimulation
#endif

@main
struct SyncSimulate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-simulate",
        abstract: "Runs the deterministic multi-device sync simulation over a range of seeds."
    )

    @Option(help: "How many seeds to run.")
    var seeds = 2_000

    @Option(help: "Random operations per seed.")
    var operations = 200

    @Option(help: "The first seed.")
    var firstSeed: UInt64 = 1

    @Option(help: "Devices per run (2-5); drawn from each seed when omitted.")
    var devices: Int?

    @Option(help: "Print every event touching one item, e.g. keychain/item-1 (use with --seeds 1).")
    var traceItem: String?

    @Option(help: "Percent of page applications after which a device dies before its state commit.")
    var crashBetweenCommitsPercent = 3

    @Flag(help: "Print what the runs exercised (writes, conflicts, resyncs, purges, crashes).")
    var verbose = false

    @Option(help: "Seeds run in parallel.")
    var parallelism = 2

    @Flag(help: "Run the shipped zone driver with real keychains over the real SQLite server storage instead of the model.")
    var shipped = false

    @Option(
        name: .customLong("break"),
        help: "With --shipped: break one rule on purpose (lose-acknowledged, undo-deletion, invent-value, skip-apply, leak-local-only, corrupt-upload, never-heal); succeeds when the checker catches it.")
    var breakRule: String?

    @Flag(help: "With --shipped: an answer held back reaches the device under the ID of the call it answered (not the current call's).")
    var lateAnswersKeepIds = false

    @Flag(help: "With --shipped: in one seed in three, the server is malicious while the faults last (withhold, replay, forced-resync, hide-statements in turn).")
    var malice = false

    func validate() throws {
        if let devices, !(2...5).contains(devices) { throw ValidationError("--devices must be 2...5") }
        if seeds < 1 || operations < 1 { throw ValidationError("--seeds and --operations must be positive") }
    }

    func run() async throws {
        if shipped {
            try await runShipped()
            return
        }
        let operations = operations
        let devices = devices
        let traceItem = traceItem
        let crashPercent = crashBetweenCommitsPercent
        let summary = await SimulationBatch.run(
            firstSeed: firstSeed, seeds: seeds, operations: operations, parallelism: parallelism
        ) {
            var configuration = SimulationConfiguration(seed: $0, operations: operations, devices: devices)
            configuration.traceItem = traceItem
            configuration.crashBetweenCommitsPercent = crashPercent
            return configuration
        }
        for failure in summary.failures {
            print("seed \(failure.seed) (\(failure.devices) devices) failed:")
            for violation in failure.violations.prefix(5) { print("  \(violation)") }
            print("  reproduce: \(failure.reproduceCommand)")
        }
        if verbose { print(summary.statistics) }
        print(summary.line)
        if !summary.failures.isEmpty { throw ExitCode.failure }
    }

    private func runShipped() async throws {
        #if canImport(ShippedSimulation)
        let directory = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        var breakRule: ShippedBreak?
        if let name = self.breakRule {
            guard let rule = ShippedBreak(rawValue: name) else {
                throw ValidationError("--break must be one of \(ShippedBreak.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            breakRule = rule
        }
        var statistics = ShippedStatistics()
        var failed = 0, caught = 0
        var properties: [ShippedProperty: Int] = [:]
        let started = ContinuousClock.now
        for seed in firstSeed..<(firstSeed + UInt64(seeds)) {
            var configuration = ShippedSimulation.Configuration(seed: seed, directory: directory)
            configuration.operations = operations
            configuration.malice = malice && breakRule == nil ? ShippedMalice.of(seed: seed) : nil
            configuration.breakRule = breakRule
            configuration.lateAnswersKeepTheirIDs = lateAnswersKeepIds
            if let devices { configuration.devices = devices }
            let result = try await ShippedSimulation.run(configuration)
            statistics.add(result.statistics)
            for violation in result.violations { properties[violation.property, default: 0] += 1 }
            if let breakRule, result.violations.contains(where: { $0.property == breakRule.property }) { caught += 1 }
            guard !result.violations.isEmpty else { continue }
            failed += 1
            guard breakRule == nil || verbose else { continue }
            print("seed \(seed) failed:")
            for violation in result.violations.prefix(verbose ? .max : 5) { print("  \(violation)") }
            print("  reproduce: sync-simulate --shipped --first-seed \(seed) --seeds 1 --operations \(operations)")
        }
        let seconds = (ContinuousClock.now - started) / .seconds(1)
        if verbose { print(statistics) }
        let byProperty = properties.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ")
        print("shipped driver: \(seeds) seeds, \(failed) with violations\(byProperty.isEmpty ? "" : " (\(byProperty))"), \(String(format: "%.2f", seconds / Double(seeds))) s per seed")
        if let breakRule {
            print("broken rule \(breakRule.rawValue): \(breakRule.property.rawValue) violated in \(caught) of \(seeds) seeds")
            if caught == 0 { throw ExitCode.failure }
            return
        }
        if failed > 0 { throw ExitCode.failure }
        #else
        throw ValidationError("--shipped needs the network stack (a build without SYNCKEYCHAIN_CORE_ONLY)")
        #endif
    }
}

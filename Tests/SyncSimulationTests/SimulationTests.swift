import SyncCore
import SyncSimulation
import Testing

@Suite("Deterministic multi-device simulation")
struct SimulationTests {
    static let seeds = 2_000
    static let operations = 200

    @Test func manySeedsConvergeWithoutViolations() async {
        let operations = Self.operations
        let summary = await SimulationBatch.run(firstSeed: 1, seeds: Self.seeds, operations: operations, parallelism: 2) {
            SimulationConfiguration(seed: $0, operations: operations)
        }
        print("simulation: \(summary.line)")
        print("simulation exercised: \(summary.statistics)")
        for failure in summary.failures.prefix(3) {
            Issue.record("seed \(failure.seed): \(failure.violations.prefix(3)) — \(failure.reproduceCommand)")
        }
        #expect(summary.violationCount == 0)
        // The run must have exercised what it claims to check.
        #expect(summary.statistics.conflictsKept > 0)
        #expect(summary.statistics.historyEntries > 0)
        #expect(summary.statistics.expiredCursors > 0)
        #expect(summary.statistics.purgedTombstones > 0)
        #expect(summary.statistics.unlistedKept > 0)
        #expect(summary.statistics.localOnlyWrites > 0)
        #expect(summary.statistics.crashesBetweenCommits > 0)
        // Key-value zones go through the same machine and the same per-item (per-key) checks.
        #expect(summary.statistics.keyValueWrites > 0)
        #expect(summary.statistics.keyValueConflicts > 0)
    }

    @Test(arguments: [7 as UInt64, 1_234, 99_999])
    func aSeedReplaysExactly(seed: UInt64) {
        let first = Simulation.run(SimulationConfiguration(seed: seed, operations: 150))
        let second = Simulation.run(SimulationConfiguration(seed: seed, operations: 150))
        #expect(first.statistics == second.statistics)
        #expect(first.violations == second.violations)
        #expect(first.statistics.writes > 0)
    }

    @Test func givingTheDrawnDeviceCountReplaysTheSameRun() {
        let drawn = Simulation.run(SimulationConfiguration(seed: 42, operations: 150))
        let explicit = Simulation.run(SimulationConfiguration(seed: 42, operations: 150, devices: drawn.devices))
        #expect(drawn.statistics == explicit.statistics)
        #expect(drawn.reproduceCommand == explicit.reproduceCommand)
        #expect(drawn.reproduceCommand.contains("--first-seed 42 --seeds 1 --operations 150 --devices \(drawn.devices)"))
    }

    @Test func lastWriterWinsIgnoringVectorsIsCaught() async {
        let summary = await SimulationBatch.run(firstSeed: 1, seeds: 60, operations: Self.operations, parallelism: 2) {
            var configuration = SimulationConfiguration(seed: $0, operations: 200)
            configuration.mergeRule = .lastWriterWinsIgnoringVectors
            return configuration
        }
        let kinds = Dictionary(grouping: summary.failures.flatMap(\.violations)) { Self.kind(of: $0) }
            .mapValues(\.count).sorted { $0.key < $1.key }
        print("broken merge rule: \(summary.failures.count) of \(summary.seeds) seeds failed, \(summary.violationCount) violations: \(kinds)")
        #expect(summary.failures.count > summary.seeds / 2)
        #expect(kinds.contains { $0.key.contains("acknowledged write") })
        if let failure = summary.failures.first {
            var configuration = SimulationConfiguration(seed: failure.seed, operations: 200, devices: failure.devices)
            configuration.mergeRule = .lastWriterWinsIgnoringVectors
            #expect(Simulation.run(configuration).violations == failure.violations)
        }
    }

    /// B4: a local change written over the committed state's version only, not the keychain's,
    /// undoes writes after a crash between the two commits; the checker sees it.
    @Test func writingOverTheStatesVersionAfterACrashIsCaught() async {
        let summary = await SimulationBatch.run(firstSeed: 1, seeds: 300, operations: Self.operations, parallelism: 2) {
            var configuration = SimulationConfiguration(seed: $0, operations: 200)
            configuration.ignoresAppliedVersions = true
            configuration.crashBetweenCommitsPercent = 30
            return configuration
        }
        let kinds = Dictionary(grouping: summary.failures.flatMap(\.violations)) { Self.kind(of: $0) }
            .mapValues(\.count).sorted { $0.key < $1.key }
        print("local changes over the state's version: \(summary.failures.count) of \(summary.seeds) seeds failed: \(kinds)")
        #expect(summary.failures.count > 0)
        // The same seeds and crashes with the rule: clean.
        let control = await SimulationBatch.run(firstSeed: 1, seeds: 300, operations: Self.operations, parallelism: 2) {
            var configuration = SimulationConfiguration(seed: $0, operations: 200)
            configuration.crashBetweenCommitsPercent = 30
            return configuration
        }
        #expect(control.violationCount == 0, "\(control.failures.prefix(3).map(\.violations))")
        #expect(control.statistics.crashesBetweenCommits > 100)
    }

    /// A violation without the names of devices and items, to count violations by kind.
    static func kind(of violation: String) -> String {
        violation.split(separator: " ").filter { !$0.contains("-") && !$0.contains("/") && !$0.contains(":") }
            .joined(separator: " ")
    }
}

/// Many seeds run in parallel, as CI and the `sync-simulate` command do.
public enum SimulationBatch {
    /// The outcome of a range of seeds.
    public struct Summary: Sendable {
        /// Seeds run.
        public var seeds: Int
        /// Operations per seed.
        public var operations: Int
        /// The seeds that found violations.
        public var failures: [SimulationResult]
        /// What all the runs exercised together.
        public var statistics: SimulationStatistics

        /// Total violations found.
        public var violationCount: Int { failures.reduce(0) { $0 + $1.violations.count } }

        /// The summary line, e.g. `2000 seeds x 200 operations checked, 0 violations`.
        public var line: String {
            "\(seeds) seeds x \(operations) operations checked, \(violationCount) violations"
        }
    }

    /// Runs seeds `firstSeed ..< firstSeed + seeds`, each built by `configure`, on `parallelism`
    /// tasks.
    public static func run(
        firstSeed: UInt64, seeds: Int, operations: Int, parallelism: Int,
        configure: @escaping @Sendable (UInt64) -> SimulationConfiguration
    ) async -> Summary {
        let lanes = max(1, min(parallelism, seeds))
        let outcome = await withTaskGroup(of: ([SimulationResult], SimulationStatistics).self) { group in
            for lane in 0..<lanes {
                group.addTask {
                    var failed: [SimulationResult] = []
                    var statistics = SimulationStatistics()
                    for offset in stride(from: lane, to: seeds, by: lanes) {
                        let result = Simulation.run(configure(firstSeed + UInt64(offset)))
                        statistics.add(result.statistics)
                        if !result.violations.isEmpty { failed.append(result) }
                        // A lane runs for seconds; without yielding it would hold a thread of the
                        // cooperative pool (one per core) that other work, such as I/O, waits for.
                        await Task.yield()
                    }
                    return (failed, statistics)
                }
            }
            var all: [SimulationResult] = []
            var statistics = SimulationStatistics()
            for await (failed, laneStatistics) in group {
                all += failed
                statistics.add(laneStatistics)
            }
            return (all.sorted { $0.seed < $1.seed }, statistics)
        }
        return Summary(seeds: seeds, operations: operations, failures: outcome.0, statistics: outcome.1)
    }
}

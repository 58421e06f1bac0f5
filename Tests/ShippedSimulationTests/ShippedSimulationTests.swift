import Foundation
import ShippedSimulation
import Testing

@Suite("The simulation of the shipped driver over the real SQLite storage")
struct ShippedSimulationTests {
    /// Seeds 1–200 (about 40 s in a debug build); `sync-simulate --shipped` runs more.
    @Test func seedsRunWithoutViolations() async throws {
        let directory = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        var violations: [String] = []
        var statistics = ShippedStatistics()
        for seed in UInt64(1)...200 {
            let result = try await ShippedSimulation.run(.init(seed: seed, directory: directory))
            violations += result.violations.map { "seed \(seed): \($0)" }
            statistics.add(result.statistics)
        }
        // The run exercised what it claims to.
        #expect(statistics.reEnrolments > 0 && statistics.crashesBetweenCommits > 0 && statistics.purgedTombstones > 0)
        #expect(statistics.lostMessages > 0 && statistics.clockJumps > 0)
        #expect(violations.isEmpty, "\(violations.prefix(10).joined(separator: "\n"))")
    }
}

import Foundation
import ShippedSimulation
import Testing

@Suite("The simulation of the shipped driver over the real SQLite storage")
struct ShippedSimulationTests {
    static let directory = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()

    /// Seeds 1–200 (about 40 s in a debug build); `sync-simulate --shipped` runs more.
    @Test func seedsRunWithoutViolations() async throws {
        var violations: [String] = []
        var cameBack: [String] = []
        var statistics = ShippedStatistics()
        for seed in UInt64(1)...200 {
            let result = try await ShippedSimulation.run(.init(seed: seed, directory: Self.directory))
            for violation in result.violations {
                if violation.property == .nothingComesBack { cameBack.append("seed \(seed): \(violation)") } else { violations.append("seed \(seed): \(violation)") }
            }
            statistics.add(result.statistics)
        }
        // The run exercised what it claims to.
        #expect(statistics.reEnrolments > 0 && statistics.crashesBetweenCommits > 0 && statistics.purgedTombstones > 0)
        #expect(statistics.lostMessages > 0 && statistics.clockJumps > 0)
        #expect(statistics.deliveredTwice > 0 && statistics.lateRequests > 0 && statistics.lateAnswers > 0)
        #expect(statistics.refusedTooLarge > 0 && statistics.refusedQuota > 0 && statistics.largeWrites > 0 && statistics.setAside > 0)
        #expect(violations.isEmpty, "\(violations.prefix(10).joined(separator: "\n"))")
        // Found by this simulation (issue 11 note, decision 0171): a device that lost its sync
        // state and returns with an old copy of an item deleted meanwhile (its tombstone
        // collected) pushes the copy as a new write, and the deleted value comes back.
        withKnownIssue("a device without sync state revives an item whose deletion was collected", isIntermittent: true) {
            #expect(cameBack.isEmpty, "\(cameBack.prefix(5).joined(separator: "\n"))")
        }
    }

    /// Each property's rule broken on purpose is caught: over a few seeds, the broken variant
    /// violates its property more often than the same seeds unbroken (decision 0172).
    @Test(arguments: ShippedBreak.allCases)
    func brokenRuleIsCaught(_ rule: ShippedBreak) async throws {
        var broken = 0, unbroken = 0
        for seed in UInt64(1)...4 {
            var configuration = ShippedSimulation.Configuration(seed: seed, directory: Self.directory)
            configuration.operations = 80
            unbroken += try await ShippedSimulation.run(configuration).violations.filter { $0.property == rule.property }.count
            configuration.breakRule = rule
            broken += try await ShippedSimulation.run(configuration).violations.filter { $0.property == rule.property }.count
        }
        #expect(broken > 0, "the checker did not catch \(rule.rawValue)")
        #expect(broken > unbroken)
    }
}

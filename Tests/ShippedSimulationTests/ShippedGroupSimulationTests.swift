import Foundation
import ShippedSimulation
import Testing

@Suite("The simulation of a shared group's items over the real SQLite storage")
struct ShippedGroupSimulationTests {
    /// Seeds 1–28, every even one with a malicious server (in turn: it keeps Bob's removal from his
    /// devices, or hides half the items from them): clean,
    /// and they exercise what they claim to (the test command runs seeds 1–200 through
    /// `sync-simulate --groups --malice`).
    @Test func seedsRunWithoutViolations() async throws {
        var violations: [String] = []
        var statistics = ShippedGroupStatistics()
        for seed in UInt64(1)...28 {
            var configuration = ShippedGroupSimulation.Configuration(seed: seed, directory: ShippedSimulationTests.directory)
            configuration.malice = GroupMalice.of(seed: seed)
            let result = try await ShippedGroupSimulation.run(configuration)
            violations += result.violations.map { "seed \(seed): \($0)" }
            statistics.add(result.statistics)
        }
        #expect(statistics.removals > 0 && statistics.additions > 0 && statistics.failedSyncs > 0)
        // Bob left from one of his devices, and Alice started the epoch his leave made due.
        #expect(statistics.leaves > 0 && statistics.rekeys > 0)
        // Bob's devices, kept from his removal, found it in Alice's statements; Alice's refused
        // what they wrote after it.
        #expect(statistics.withheldRemovalsFound > 0 && statistics.refused > 0)
        // Bob's devices, served fewer items than Alice's stated, said so.
        #expect(statistics.hiddenItemsFound > 0)
        // Bob's devices, finding him out, forgot the group (and were refused writes until re-added).
        #expect(statistics.forgotten > 0)
        #expect(violations.isEmpty, "\(violations.prefix(10).joined(separator: "\n"))")
    }

    /// How many violations of `property` the runs of `seeds`, each configured by `breaking`, report.
    func caught(_ property: ShippedProperty, seeds: some Sequence<UInt64>, breaking: (inout ShippedGroupSimulation.Configuration) -> Void) async throws -> Int {
        var caught = 0
        for seed in seeds {
            var configuration = ShippedGroupSimulation.Configuration(seed: seed, directory: ShippedSimulationTests.directory)
            breaking(&configuration)
            caught += try await ShippedGroupSimulation.run(configuration).violations.filter { $0.property == property }.count
        }
        return caught
    }

    /// With Alice's devices taking every writer's versions, what Bob's devices write after a
    /// removal the server kept from them reaches hers: the checker says so.
    @Test func aDeviceThatAdmitsEveryWriterIsCaught() async throws {
        let caught = try await caught(.removedMemberWritesNothing, seeds: stride(from: UInt64(2), through: 12, by: 2)) {
            $0.malice = .withheldRemoval
            $0.admitsEveryWriter = true
        }
        #expect(caught > 0)
    }

    /// With Bob's devices keeping the group once he is out of it, the checker finds a departed
    /// device holding its items.
    @Test func aDeviceThatKeepsAGroupItIsOutOfIsCaught() async throws {
        let caught = try await caught(.departedDeviceHoldsNothing, seeds: UInt64(1)...12) { $0.keepsDepartedGroups = true }
        #expect(caught > 0)
    }

    /// With Alice's devices sealing under the group's first key, Bob's devices, kept from his
    /// removal by the server, read what she wrote after it: the checker says so.
    @Test func aDeviceThatSealsUnderAnOldEpochIsCaught() async throws {
        let caught = try await caught(.removedMemberReadsNothingLater, seeds: stride(from: UInt64(2), through: 12, by: 2)) {
            $0.malice = .withheldRemoval
            $0.sealsUnderTheFirstEpoch = true
        }
        #expect(caught > 0)
    }
}

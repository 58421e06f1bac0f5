import Foundation
import Fuzzing
import Testing

/// Every decoder of outside bytes, fuzzed briefly with a fixed seed (decision 0267): its seeds
/// (valid encodings the product makes) are accepted, and no mutated input traps, throws an error
/// that is not the decoder's own, takes over the per-input bound, or fails to round-trip. The long
/// run is `scripts/fuzz.sh`; what it finds is kept under Corpus/ and replayed here.
@Suite struct FuzzingTests {
    /// A fixed budget per target: about 1.2 s or 3,000 inputs, whichever comes first (the whole
    /// suite adds well under a minute on two cores).
    static var configuration: FuzzEngine.Configuration {
        var configuration = FuzzEngine.Configuration()
        configuration.seed = 0x2026_1125
        configuration.maximumExecutions = 3000
        configuration.timeLimit = .milliseconds(1200)
        configuration.perInputLimit = .seconds(2)
        configuration.maximumLength = 16 * 1024
        return configuration
    }

    @Test(arguments: FuzzTargets.all.map(\.name))
    func decoderHoldsUnderMutatedInput(_ name: String) throws {
        let target = try #require(FuzzTargets.named(name))
        let report = FuzzEngine(Self.configuration).run(target)
        #expect(report.executions > target.seeds.count, "\(name) ran no mutated input")
        for failure in report.failures.prefix(5) {
            Issue.record("\(name): \(failure)")
        }
    }

    @Test func everyTargetHasSeedsAndAUniqueName() {
        let names = FuzzTargets.all.map(\.name)
        #expect(Set(names).count == names.count)
        for target in FuzzTargets.all {
            #expect(!target.seeds.isEmpty, "\(target.name) has no seed")
        }
    }

    /// Each input kept under Corpus/TARGET/ (the seeds the long run starts from, and every input
    /// that once broke a property) holds now.
    @Test func keptInputsHold() throws {
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Corpus")
        let directories = try FileManager.default.contentsOfDirectory(atPath: corpus.path).filter { !$0.hasPrefix(".") && !$0.hasSuffix(".md") }
        #expect(!directories.isEmpty, "no kept inputs under \(corpus.path)")
        for directory in directories {
            guard let target = FuzzTargets.named(directory) else {
                Issue.record("Corpus/\(directory) names no target")
                continue
            }
            for file in try FileManager.default.contentsOfDirectory(atPath: corpus.appendingPathComponent(directory).path) {
                let input = try Data(contentsOf: corpus.appendingPathComponent(directory).appendingPathComponent(file))
                if case .broken(let message) = target.outcome(of: Array(input)) {
                    Issue.record("Corpus/\(directory)/\(file): \(message)")
                }
            }
        }
    }
}

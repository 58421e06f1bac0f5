import Crypto
import Foundation
import ShippedSimulation

/// The seeded mutation engine: every seed first (each must be accepted), then mutated inputs, until
/// a number of executions or a time is reached. Deterministic for a seed: the same inputs in the
/// same order on every machine (a time limit only cuts the sequence short).
package struct FuzzEngine: Sendable {
    package struct Configuration: Sendable {
        /// The seed of the pseudo-random sequence.
        package var seed: UInt64 = 0x5EED
        /// Stop after this many inputs, seeds included.
        package var maximumExecutions = Int.max
        /// Stop after this long.
        package var timeLimit: Duration = .seconds(60)
        /// An input that takes longer is a failure.
        package var perInputLimit: Duration = .seconds(2)
        /// The largest input made, in bytes.
        package var maximumLength = 64 * 1024
        /// Stop at the first failure.
        package var stopAtFirstFailure = false
        /// A failure when the process's peak resident size passes this many bytes, checked after
        /// each input (for a process of its own, like `keychain-fuzz run`; nil in the tests, which
        /// share theirs).
        package var memoryLimit: Int?

        package init() {}
    }

    /// A failing input and what it broke.
    package struct Failure: Sendable, CustomStringConvertible {
        package var input: [UInt8]
        package var message: String

        /// The name a kept copy of the input gets: `crash-` and the first 16 hex digits of its SHA-256.
        package var fileName: String { "crash-" + SHA256.hash(data: input).prefix(8).map { String(format: "%02x", $0) }.joined() }

        package var description: String {
            "\(message) (input of \(input.count) bytes: \(input.prefix(64).map { String(format: "%02x", $0) }.joined())\(input.count > 64 ? "…" : ""))"
        }
    }

    /// What a run did.
    package struct Report: Sendable {
        package var target: String
        package var executions = 0
        package var accepted = 0
        package var elapsed: Duration = .zero
        package var slowest: Duration = .zero
        package var failures: [Failure] = []

        package var executionsPerSecond: Double {
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            return seconds > 0 ? Double(executions) / seconds : 0
        }
    }

    package var configuration: Configuration

    package init(_ configuration: Configuration) {
        self.configuration = configuration
    }

    /// Runs `target`; `willRun` sees each input before it runs (the command line keeps it for a trap).
    package func run(_ target: FuzzTarget, willRun: (([UInt8]) -> Void)? = nil) -> Report {
        var report = Report(target: target.name)
        var random = SplitMix64(seed: configuration.seed ^ Self.hash(target.name))
        let mutator = Mutator(target: target, maximumLength: configuration.maximumLength)
        let clock = ContinuousClock()
        let start = clock.now
        var index = 0
        while report.executions < configuration.maximumExecutions, clock.now - start < configuration.timeLimit {
            let isSeed = index < target.seeds.count
            let input = isSeed ? target.seeds[index] : mutator.input(&random)
            index += 1
            willRun?(input)
            let before = clock.now
            let outcome = target.outcome(of: input)
            let took = clock.now - before
            report.executions += 1
            report.slowest = max(report.slowest, took)
            var problem: String?
            switch outcome {
            case .accepted: report.accepted += 1
            case .refused: if isSeed { problem = "a seed was refused: the seed corpus is not valid" }
            case .broken(let message): problem = message
            }
            if took > configuration.perInputLimit { problem = "took \(took), over the bound of \(configuration.perInputLimit)" }
            if let problem {
                report.failures.append(Failure(input: input, message: problem))
                if configuration.stopAtFirstFailure { break }
            }
            // Past the limit the process stays past it: the first input that took it there is the one.
            if let limit = configuration.memoryLimit, Self.peakResidentBytes() > limit {
                report.failures.append(Failure(input: input, message: "the process passed \(limit >> 20) MiB resident"))
                break
            }
        }
        report.elapsed = clock.now - start
        return report
    }

    /// The process's peak resident size so far, in bytes.
    static func peakResidentBytes() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return usage.ru_maxrss * 1024
    }

    /// FNV-1a of the name: each target its own sequence under one seed.
    static func hash(_ name: String) -> UInt64 {
        name.utf8.reduce(0xCBF2_9CE4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 }
    }
}

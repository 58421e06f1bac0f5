import Foundation
import Fuzzing
import ShippedSimulation
import Testing

/// The engine itself: it must find what a target breaks, or the fuzzing proves nothing.
@Suite struct FuzzEngineTests {
    struct OwnError: Error {}
    struct ForeignError: Error {}

    static func engine(executions: Int = 5000) -> FuzzEngine {
        var configuration = FuzzEngine.Configuration()
        configuration.seed = 1
        configuration.maximumExecutions = executions
        configuration.timeLimit = .seconds(30)
        configuration.stopAtFirstFailure = true
        return FuzzEngine(configuration)
    }

    @Test func findsAnInputThatThrowsAForeignError() {
        let target = FuzzTarget("planted", seeds: [Array("abcdefgh".utf8)], clearErrors: { $0 is OwnError }) { bytes in
            if bytes.contains(0xFF) { throw ForeignError() }
            if bytes.count < 4 { throw OwnError() }
        }
        let report = Self.engine().run(target)
        let failure = report.failures.first
        #expect(failure?.input.contains(0xFF) == true)
        #expect(failure?.message.contains("ForeignError") == true)
    }

    @Test func findsABrokenRoundTripInJSON() {
        let target = FuzzTarget("planted-json", seeds: [Array(#"{"a":[1,2],"b":"x"}"#.utf8)], isJSON: true, clearErrors: { _ in true }) { bytes in
            let text = String(decoding: bytes, as: UTF8.self)
            try FuzzCheck.require(!text.contains("1e400"), "a huge number")
        }
        #expect(Self.engine().run(target).failures.first?.message == "a huge number")
    }

    @Test func reportsARefusedSeedAndASlowInput() {
        let refusing = FuzzTarget("refusing", seeds: [[1]], clearErrors: { _ in true }) { _ in throw OwnError() }
        #expect(Self.engine(executions: 1).run(refusing).failures.first?.message.contains("seed") == true)
        var configuration = FuzzEngine.Configuration()
        configuration.maximumExecutions = 1
        configuration.perInputLimit = .zero
        let slow = FuzzTarget("slow", seeds: [[1]], clearErrors: { _ in true }) { _ in _ = (0..<1000).reduce(0, +) }
        #expect(FuzzEngine(configuration).run(slow).failures.first?.message.contains("over the bound") == true)
    }

    @Test func theSameSeedMakesTheSameInputs() {
        let target = FuzzTargets.named("import-json")!
        var first = SplitMix64(seed: 9)
        var second = SplitMix64(seed: 9)
        let mutator = Mutator(target: target, maximumLength: 4096)
        for _ in 0..<50 {
            #expect(mutator.input(&first) == mutator.input(&second))
        }
    }
}

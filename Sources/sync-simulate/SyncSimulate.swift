import ArgumentParser
import Foundation
import ShippedSimulation

/// `sync-simulate`: the deterministic simulation of the code we ship (docs/simulation.md): devices
/// with real keychains and the shipped zone driver over the real SQLite server storage, with every
/// fault, one seed per run.
@main
struct SyncSimulate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync-simulate",
        abstract: "Runs the deterministic simulation of the shipped sync code over a range of seeds."
    )

    @Option(help: "How many seeds to run.")
    var seeds = 2_000

    @Option(help: "Random operations per seed.")
    var operations = 120

    @Option(help: "The first seed.")
    var firstSeed: UInt64 = 1

    @Option(help: "Devices per run (2-5); 3 when omitted.")
    var devices: Int?

    @Flag(help: "Print what the runs exercised, and every violation of a failing seed.")
    var verbose = false

    /// Accepted so that earlier command lines still run: the simulation runs the shipped code only.
    @Flag(help: .hidden)
    var shipped = false

    @Option(
        name: .customLong("break"),
        help: ArgumentHelp(
            "Break one rule on purpose (\(ShippedBreak.allCases.map(\.rawValue).joined(separator: ", "))); succeeds when the checker catches it."))
    var breakRule: String?

    @Option(help: "The most collected deletions the server keeps a zone (100,000); fewer makes it forget deletions without evidence.")
    var collectedDeletionBound: Int?

    @Flag(help: "An answer held back reaches the device under the ID of the call it answered (not the current call's).")
    var lateAnswersKeepIds = false

    @Flag(
        help: ArgumentHelp(
            "In one seed in three the server is malicious while the faults last (in turn: \(ShippedMalice.allCases.map(\.rawValue).joined(separator: ", ")))."))
    var malice = false

    @Flag(help: "The operator restores the server from a backup a quarter of the way in, half-way through the faults (honest runs only).")
    var restores = false

    @Flag(
        help: ArgumentHelp(
            "Run a shared group instead: two accounts of two devices each sync a group's items while the owner removes the member and adds it back (decision 0295); with --malice, in one seed in two the server is malicious (in turn: \(GroupMalice.allCases.map(\.rawValue).joined(separator: ", ")))."))
    var groups = false

    func validate() throws {
        if groups, breakRule != nil || devices != nil || collectedDeletionBound != nil || lateAnswersKeepIds || restores {
            throw ValidationError("--groups takes --seeds, --first-seed, --operations, --malice and --verbose only")
        }
        if restores, malice || breakRule != nil { throw ValidationError("--restores runs an honest server: not with --malice or --break") }
        if let devices, !(2...5).contains(devices) { throw ValidationError("--devices must be 2...5") }
        if seeds < 1 || operations < 1 { throw ValidationError("--seeds and --operations must be positive") }
        if let collectedDeletionBound, collectedDeletionBound < 0 { throw ValidationError("--collected-deletion-bound must be 0 or more") }
        if let breakRule, ShippedBreak(rawValue: breakRule) == nil {
            throw ValidationError("--break must be one of \(ShippedBreak.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    }

    func run() async throws {
        let directory = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        if groups { return try await runGroups(in: directory) }
        let breakRule = self.breakRule.flatMap(ShippedBreak.init(rawValue:))
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
            if let collectedDeletionBound { configuration.collectedDeletionBound = collectedDeletionBound }
            configuration.restores = restores
            let result = try await ShippedSimulation.run(configuration)
            statistics.add(result.statistics)
            for violation in result.violations { properties[violation.property, default: 0] += 1 }
            if let breakRule, result.violations.contains(where: { $0.property == breakRule.property }) { caught += 1 }
            guard !result.violations.isEmpty else { continue }
            failed += 1
            guard breakRule == nil || verbose else { continue }
            print("seed \(seed) failed\(configuration.malice.map { " (malicious server: \($0.rawValue))" } ?? ""):")
            for violation in result.violations.prefix(verbose ? .max : 5) { print("  \(violation)") }
            print("  reproduce: \(reproduceCommand(seed: seed))")
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
    }

    /// The shared group's runs (``ShippedGroupSimulation``).
    private func runGroups(in directory: String) async throws {
        var statistics = ShippedGroupStatistics()
        var failed = 0
        let started = ContinuousClock.now
        for seed in firstSeed..<(firstSeed + UInt64(seeds)) {
            var configuration = ShippedGroupSimulation.Configuration(seed: seed, directory: directory)
            configuration.operations = operations
            configuration.malice = malice ? GroupMalice.of(seed: seed) : nil
            let result = try await ShippedGroupSimulation.run(configuration)
            statistics.add(result.statistics)
            guard !result.violations.isEmpty else { continue }
            failed += 1
            print("seed \(seed) failed\(configuration.malice.map { " (malicious server: \($0.rawValue))" } ?? ""):")
            for violation in result.violations.prefix(verbose ? .max : 5) { print("  \(violation)") }
            print("  reproduce: \(reproduceCommand(seed: seed))")
        }
        let seconds = (ContinuousClock.now - started) / .seconds(1)
        if verbose { print(statistics) }
        print("shared group: \(seeds) seeds, \(failed) with violations, \(String(format: "%.2f", seconds / Double(seeds))) s per seed")
        if failed > 0 { throw ExitCode.failure }
    }

    /// The command line that runs `seed` again exactly as this run did.
    private func reproduceCommand(seed: UInt64) -> String {
        var words = ["sync-simulate", "--first-seed", "\(seed)", "--seeds", "1", "--operations", "\(operations)"]
        if let devices { words += ["--devices", "\(devices)"] }
        if groups { words.append("--groups") }
        if malice { words.append("--malice") }
        if restores { words.append("--restores") }
        if let breakRule { words += ["--break", breakRule] }
        if lateAnswersKeepIds { words.append("--late-answers-keep-ids") }
        if let collectedDeletionBound { words += ["--collected-deletion-bound", "\(collectedDeletionBound)"] }
        return words.joined(separator: " ")
    }
}

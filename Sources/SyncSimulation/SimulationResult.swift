/// The outcome of one seed.
public struct SimulationResult: Sendable {
    /// The seed.
    public var seed: UInt64
    /// How many devices took part.
    public var devices: Int
    /// How many random operations ran.
    public var operations: Int
    /// What the checker found; empty when the run is correct.
    public var violations: [String]
    /// What the run exercised.
    public var statistics: SimulationStatistics

    /// The command that replays this seed exactly.
    public var reproduceCommand: String {
        "swift run sync-simulate --first-seed \(seed) --seeds 1 --operations \(operations) --devices \(devices)"
    }
}

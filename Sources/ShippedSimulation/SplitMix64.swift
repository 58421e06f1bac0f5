/// A small, fast, seedable generator (Steele, Lea and Flood's SplitMix64): the simulation's only
/// source of randomness, so a seed replays a run exactly on any platform.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose whole output is determined by `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound` (bound > 0), by multiply-high; our own, so it cannot change with
    /// the standard library's algorithms.
    package mutating func below(_ bound: Int) -> Int {
        precondition(bound > 0)
        return Int(next().multipliedFullWidth(by: UInt64(bound)).high)
    }

    /// A number in `range`.
    package mutating func number(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + below(range.count)
    }

    /// True with probability `percent` / 100.
    package mutating func chance(percent: Int) -> Bool {
        below(100) < percent
    }

    /// One element of a non-empty array.
    package mutating func pick<Element>(_ elements: [Element]) -> Element {
        elements[below(elements.count)]
    }
}

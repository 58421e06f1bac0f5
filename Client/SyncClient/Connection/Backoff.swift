/// Exponential backoff with full jitter: each delay is random in `0...min(maximum, base·2^n)`,
/// so devices that lost the server at the same moment do not come back in lockstep.
package struct Backoff: Sendable {
    package var base: Duration
    package var maximum: Duration
    private var attempt = 0

    package init(base: Duration = .milliseconds(250), maximum: Duration = .seconds(30)) {
        self.base = base
        self.maximum = maximum
    }

    /// The next delay.
    package mutating func next() -> Duration {
        let ceiling = min(maximum, base * (1 << min(attempt, 20)))
        attempt += 1
        let fraction = Double.random(in: 0.1...1)
        return ceiling * fraction
    }

    package mutating func reset() { attempt = 0 }
}

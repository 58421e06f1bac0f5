/// Median and spread of a set of samples (throughputs or times).
struct Statistics: Sendable, Codable {
    var median: Double
    var minimum: Double
    var maximum: Double
    /// The 99th percentile (the maximum below a hundred samples).
    var p99: Double
    var count: Int

    init(_ values: [Double]) {
        precondition(!values.isEmpty, "statistics of no samples")
        let sorted = values.sorted()
        let middle = sorted.count / 2
        median = sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
        minimum = sorted[0]
        maximum = sorted[sorted.count - 1]
        p99 = Self.quantile(sorted, 0.99)
        count = sorted.count
    }

    /// (max - min) / median: how far apart the samples were, relative to the median.
    var relativeSpread: Double { median == 0 ? 0 : (maximum - minimum) / median }

    /// The value at a quantile between 0 and 1, from samples kept by the caller.
    static func quantile(_ values: [Double], _ q: Double) -> Double {
        let sorted = values.sorted()
        let position = min(sorted.count - 1, max(0, Int((Double(sorted.count - 1) * q).rounded())))
        return sorted[position]
    }
}

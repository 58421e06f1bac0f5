/// One line of the benchmark table: a product measurement, the baseline it is judged against
/// (measured in the same run), and the target.
struct Figure: Sendable, Codable {
    /// How the figure is judged.
    enum Target: Sendable, Codable {
        /// product / baseline throughput must be at least this.
        case throughputRatioAtLeast(Double)
        /// product / baseline time must be at most this.
        case timeRatioAtMost(Double)
        /// An absolute throughput (operations per second) to reach.
        case throughputAtLeast(Double)
        /// An absolute median time, in the figure's unit, not to exceed.
        case timeAtMost(Double)
        /// Median and 99th-percentile times, in the figure's unit, not to exceed.
        case latencyAtMost(median: Double, p99: Double)
        /// product / baseline 99th percentiles (times) must be at most this.
        case p99RatioAtMost(Double)
        /// product / baseline medians of a quantity that should come back to its baseline (open
        /// descriptors, resident memory) must be at most this.
        case ratioAtMost(Double)
        /// Reported only.
        case report
    }

    var name: String
    var unit: String
    /// Nil when the figure could not run; ``note`` then says why.
    var product: Statistics?
    var baselineName: String?
    var baseline: Statistics?
    var target: Target
    var note: String?

    /// product / baseline medians (99th percentiles for a ``Target/p99RatioAtMost(_:)`` figure),
    /// when there is a baseline.
    var ratio: Double? {
        guard let product, let baseline else { return nil }
        if case .p99RatioAtMost = target { return baseline.p99 > 0 ? product.p99 / baseline.p99 : nil }
        return baseline.median > 0 ? product.median / baseline.median : nil
    }

    /// Whether the figure meets its target; `nil` when it only reports.
    var meetsTarget: Bool? {
        switch target {
        case .throughputRatioAtLeast(let minimum): ratio.map { $0 >= minimum }
        case .timeRatioAtMost(let maximum): ratio.map { $0 <= maximum }
        case .throughputAtLeast(let minimum): product.map { $0.median >= minimum }
        case .timeAtMost(let maximum): product.map { $0.median <= maximum }
        case .latencyAtMost(let median, let p99): product.map { $0.median <= median && $0.p99 <= p99 }
        case .p99RatioAtMost(let maximum), .ratioAtMost(let maximum): ratio.map { $0 <= maximum }
        case .report: nil
        }
    }

    var targetText: String {
        switch target {
        case .throughputRatioAtLeast(let minimum): "≥ \(format(minimum))×"
        case .timeRatioAtMost(let maximum): "≤ \(format(maximum))× time"
        case .throughputAtLeast(let minimum): "≥ \(format(minimum, digits: 0)) \(unit)"
        case .timeAtMost(let maximum): "≤ \(format(maximum, digits: 0)) \(unit)"
        case .latencyAtMost(let median, let p99): "median ≤ \(format(median, digits: 0)), p99 ≤ \(format(p99, digits: 0)) \(unit)"
        case .p99RatioAtMost(let maximum): "p99 ≤ \(format(maximum))× baseline"
        case .ratioAtMost(let maximum): "≤ \(format(maximum))× baseline"
        case .report: "report"
        }
    }
}

extension Figure {
    /// A row for a figure that could not run, saying why.
    static func notRun(_ name: String, unit: String, target: Target, reason: String) -> Figure {
        Figure(name: name, unit: unit, product: nil, baselineName: nil, baseline: nil, target: target, note: reason.hasPrefix("failed") ? reason : "not run: \(reason)")
    }
}

func format(_ value: Double, digits: Int = 2) -> String {
    var text = String(Int((value * pow10(digits)).rounded()))
    guard digits > 0 else { return text }
    let negative = text.hasPrefix("-")
    if negative { text.removeFirst() }
    while text.count <= digits { text = "0" + text }
    text.insert(".", at: text.index(text.endIndex, offsetBy: -digits))
    return (negative ? "-" : "") + text
}

private func pow10(_ digits: Int) -> Double {
    (0..<digits).reduce(1.0) { value, _ in value * 10 }
}

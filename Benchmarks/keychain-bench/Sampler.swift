/// Repeated timing of one operation, as throughput samples.
///
/// Each sample runs the operation `iterations` times and records operations per second. Product
/// and baseline samples are taken alternately (see ``Sampler/compare(product:baseline:)``) so that
/// a noisy neighbour or a frequency change on a shared 2-core machine hits both alike.
struct Sampler {
    var samples: Int
    var iterations: Int
    private let clock = ContinuousClock()

    init(samples: Int, iterations: Int) {
        self.samples = samples
        self.iterations = iterations
    }

    /// Throughput of `operation` (called with the running index), one value per sample.
    func measure(_ operation: (Int) throws -> Void) rethrows -> Statistics {
        var rates: [Double] = []
        var index = 0
        for _ in 0..<samples {
            rates.append(try sample(&index, operation))
        }
        return Statistics(rates)
    }

    /// Product and baseline throughputs, sampled alternately.
    func compare(
        product: (Int) throws -> Void,
        baseline: (Int) throws -> Void
    ) rethrows -> (product: Statistics, baseline: Statistics) {
        var productRates: [Double] = []
        var baselineRates: [Double] = []
        var productIndex = 0
        var baselineIndex = 0
        for _ in 0..<samples {
            baselineRates.append(try sample(&baselineIndex, baseline))
            productRates.append(try sample(&productIndex, product))
        }
        return (Statistics(productRates), Statistics(baselineRates))
    }

    private func sample(_ index: inout Int, _ operation: (Int) throws -> Void) rethrows -> Double {
        let start = clock.now
        for _ in 0..<iterations {
            try operation(index)
            index += 1
        }
        return Double(iterations) / (clock.now - start).seconds
    }
}

extension Duration {
    /// The duration in seconds, as a floating-point number.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

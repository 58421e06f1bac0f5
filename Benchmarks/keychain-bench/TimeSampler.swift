/// Repeated timing of an async operation, in milliseconds per call.
///
/// Each sample runs the operation `iterations` times and records the mean time per call. Product
/// and baseline samples alternate, as in ``Sampler``.
struct TimeSampler {
    var samples: Int
    var iterations: Int
    private let clock = ContinuousClock()

    init(samples: Int, iterations: Int) {
        self.samples = max(1, samples)
        self.iterations = max(1, iterations)
    }

    /// Milliseconds per call of `operation` (called with the running index), one value per sample.
    func measure(_ operation: (Int) async throws -> Void) async throws -> [Double] {
        var times: [Double] = []
        var index = 0
        for _ in 0..<samples {
            times.append(try await sample(&index, operation))
        }
        return times
    }

    /// Product and baseline times, sampled alternately.
    func compare(
        product: (Int) async throws -> Void,
        baseline: (Int) async throws -> Void
    ) async throws -> (product: Statistics, baseline: Statistics) {
        var productTimes: [Double] = []
        var baselineTimes: [Double] = []
        var productIndex = 0
        var baselineIndex = 0
        for _ in 0..<samples {
            baselineTimes.append(try await sample(&baselineIndex, baseline))
            productTimes.append(try await sample(&productIndex, product))
        }
        return (Statistics(productTimes), Statistics(baselineTimes))
    }

    private func sample(_ index: inout Int, _ operation: (Int) async throws -> Void) async throws -> Double {
        let start = clock.now
        for _ in 0..<iterations {
            try await operation(index)
            index += 1
        }
        return (clock.now - start).seconds * 1000 / Double(iterations)
    }
}

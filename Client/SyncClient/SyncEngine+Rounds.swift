import SyncCore

extension ZoneSyncMachine.Configuration {
    /// What every zone engine of the client uses: pages of 500, push batches of 200, at most 8
    /// pushes per round.
    static let client = Self(pageSize: 500, maximumBatchSize: 200, maximumPushesPerRound: 8)
}

extension SyncEngine.RoundReport {
    /// Runs `round` until one ends in step, at most `maximumRounds` times, and adds up what they
    /// did: the loop every zone engine's `syncUntilInStep` shares.
    ///
    /// - Parameter subject: what the error messages start with (empty, or "zone …: ").
    /// - Throws: ``SyncClientError`` `rejectedVersions` when some pulled versions were rejected,
    ///   `notInStep` when the rounds ran out, or the error that stopped a round.
    static func summingRounds(
        maximumRounds: Int, subject: String = "", isolation: isolated (any Actor)? = #isolation,
        _ round: () async throws -> Self
    ) async throws -> Self {
        var total = Self()
        for _ in 0..<maximumRounds {
            let report = try await round()
            total.pushed += report.pushed
            total.applied += report.applied
            total.rejected += report.rejected
            total.setAside += report.setAside
            total.unlisted += report.unlisted
            if report.inStep {
                total.inStep = true
                break
            }
        }
        guard total.inStep else {
            throw SyncClientError(.notInStep, "\(subject)not in step with the server after \(maximumRounds) rounds")
        }
        if !total.rejected.isEmpty {
            throw SyncClientError(
                .rejectedVersions,
                "\(subject)\(total.rejected.count) pulled version(s) were rejected and not applied: \(total.rejected.prefix(3).joined(separator: "; "))")
        }
        return total
    }
}

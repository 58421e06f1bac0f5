import SyncCore

extension ZoneSyncMachine.Configuration {
    /// What every zone of the client uses: pages of 500 and push batches of the server's default
    /// size (500 versions) and at most 4 MiB of content: sealed and in base64 they stay under its
    /// default 8 MiB request limit. A server set lower refuses a batch as too large and the
    /// machine halves it (decision 0224). At most 32 pushes a round: a round ends by pulling its
    /// last batch back (R23a), so a first push of 10,000 items is one round and one pull-back
    /// (with 8, three of each cost it 4 % of its time, issue 35).
    static let client = Self(pageSize: 500, maximumBatchSize: 500, maximumPushesPerRound: 32, maximumBatchContentBytes: 4 << 20)
}

/// What a round of a ``ZoneDriver`` did, or several rounds added up.
package struct SyncRoundReport: Sendable, Equatable {
    package var pushed = 0
    package var applied = 0
    package var rejected: [String] = []
    /// Versions the server refused, set aside as per-item problems.
    package var setAside = 0
    /// Items a full resync no longer listed, kept and reported (decision 0106).
    package var unlisted = 0
    /// Whether the round ended in step with the server.
    package var inStep = false

    package init() {}

    /// The problem of an item a full resync did not list (absence is not deletion, decision 0106).
    package static let unlistedProblem = "the server no longer lists it (deleted on another device and collected, or lost by the server): kept here, not pushed; delete or change it to settle"
}

extension SyncRoundReport {
    /// Runs `round` until one ends in step, at most `maximumRounds` times, and adds up what they
    /// did.
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
            // Every full resync reports each item it leaves out: a value given back, then left
            // out again, is one item (decision 0248).
            total.unlisted = max(total.unlisted, report.unlisted)
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

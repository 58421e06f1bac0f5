import Foundation
import KeychainCrypto
import SyncCore

extension ZoneDriver {
    /// Starts reading the zone's statements for the round (decision 0190). They are checked
    /// before the round's first pull (``takeStatements()``), so the read overlaps what comes
    /// before it: the refresh of the key epochs and the pushes. Nothing without a witness.
    func startReadingStatements() {
        witnessed = nil
        checkedEpochBeforePush = false
        guard witness != nil else { return }
        let server = server, witness = witness, zone = zone
        statementsInFlight = Task {
            let served = try await server.statements()
            // A later key epoch another device states is noted at once (decision 0250).
            try? witness?.noteLaterEpoch(zone, in: served)
            return served
        }
    }

    /// Checks the statements read for this round against the recorded log, once, before the
    /// round's first pull (decision 0180).
    func takeStatements() async throws {
        guard let reading = statementsInFlight, let witness else { return }
        statementsInFlight = nil
        do {
            witnessed = try witness.witness(zone, served: try await reading.value)
            if witnessed?.ownStatementLost == true, !findings.readsWholeFeed {
                findings.ownStatementLost(lostStatementFinding)
                try database.setAccountStateProblem(lostStatementFinding, zone: zone)
            } else if let other = witnessed?.servedLessThanOwn, !findings.readsWholeFeed {
                let reason = "zone \(zone): device \(other.rawValue.prefix(12)) states the server did not serve it the writes this device stated (hidden items or a forked history); the whole feed is read again, giving back what the server no longer lists"
                findings.servedLessThanStated(reason)
                try database.setAccountStateProblem(reason, zone: zone)
            }
        } catch let error as SyncClientError where error.code == .untrustedAccountState {
            try database.setAccountStateProblem(error.message, zone: zone)
            throw error
        }
    }

    /// Before the round's first push: another current member that stated a later key epoch than
    /// this device's log reaches (in any zone, this round's statements included) means the server
    /// withholds that epoch from this device (or it began after this round read the log), and what
    /// this device sealed now would be sealed under the older key, which a revoked device holds.
    /// Recorded as the zone's problem and thrown: the round pushes nothing, and the next reads the
    /// log again (decision 0250). A read of statements that failed is left to ``takeStatements()``.
    /// The check holds for a push that follows the round's first pull too (a resolution, a resync
    /// start): the statements taken then noted their later epoch already.
    func refusePushingUnderAnEarlierEpoch() async throws {
        guard !checkedEpochBeforePush, let witness else { return }
        checkedEpochBeforePush = true
        if let reading = statementsInFlight { _ = try? await reading.value }
        guard let later = try witness.laterEpoch() else { return }
        let reason = later.finding(zone: zone)
        try database.setAccountStateProblem(reason, zone: zone)
        throw SyncClientError(.untrustedAccountState, reason)
    }

    /// The server said it went back to a backup (decision 0154): that it lost this device's
    /// latest statement is explained, and the resync that follows gives back what it lost.
    func restoreAnnounced() {
        findings.restoreAnnounced(explaining: lostStatementFinding)
    }

    /// Ends a read of statements the round did not take (it failed, or ended before a pull):
    /// nothing of a round outlives it.
    func abandonStatements() async {
        guard let reading = statementsInFlight else { return }
        statementsInFlight = nil
        reading.cancel()
        _ = try? await reading.value
    }

    /// This device's view of the zone: every version the server holds as far as its records say
    /// (the baselines, with which of them are deletions; a record written before those were kept
    /// knows it only of the version it holds). Terms are kept
    /// between rounds, so only the items that changed cost an HMAC.
    func stateView(hasher: ZoneStateDigest.Hasher) -> ZoneStateView {
        // Not loaded: the records are the committed ones, whose view the state file kept.
        if !recordsLoaded, let committedView { return committedView }
        var cache = viewCache ?? ZoneStateViewCache(zone: zone.rawValue, hasher: hasher)
        let items = machine.state.records.lazy.map { item, record in
            (item: item, versions: record.baseline.map { vector in
                ZoneStateVersion(
                    vector: vector,
                    isDeleted: record.deletedBaseline.contains(vector) || (vector == record.version.vector && record.version.isDeleted))
            })
        }
        let view = cache.view(of: items)
        viewCache = cache
        return view
    }

    /// Compares the state a pull ended in step with against the statements read before it, before
    /// anything of the last page is applied. A finding is recorded as the zone's account-state
    /// problem and thrown, so the round applies and commits nothing more, and the next round reads
    /// the whole feed again. If that full resync still falls short of a statement, what it served
    /// is taken (the merge deletes nothing a server leaves out and takes no older version) and
    /// stated, the problem stays, and the round throws once it committed (decision 0203): the
    /// statement may be that of a device which was itself served less, and which can only tell
    /// once this device states what it holds.
    ///
    /// Skipped while pulled items wait for the unlock or were rejected (the view lacks them), and
    /// after a resync that did not list items this device has (reported already, decision 0106).
    func checkStatements(report: SyncRoundReport, excusing excused: VersionVector) throws -> ZoneStateView? {
        guard let witness, let witnessed else { return nil }
        guard heldItems.isEmpty, report.rejected.isEmpty, report.unlisted == 0 else {
            // Not compared; but a server that lost this device's statement gets a new one, or it
            // would be found lost again in every round (decision 0248).
            return witnessed.givesBack ? stateView(hasher: witness.hasher) : nil
        }
        let view = stateView(hasher: witness.hasher)
        let now = ZoneTransport.milliseconds(witness.now())
        // Only statements of the epoch this device verified the log at: a device that has not
        // read a later epoch yet may also lack its writes.
        let epoch = witnessed.epoch ?? VersionSealer.firstEpoch
        let comparable = witnessed.statements.lazy.filter { $0.epoch == epoch }
        let found = comparable.lazy.compactMap { statement in
            ZoneStatementCheck.compare(view, with: statement, excusing: excused, now: now, freshness: witnessed.freshness).map { (statement, $0) }
        }.first
        if let (statement, finding) = found {
            if findings.readsWholeFeed {
                let reason = "zone \(zone): \(finding.explanation), also after reading the whole feed again"
                try database.setAccountStateProblem(reason, zone: zone)
                findings.stillShort(reason, of: .init(device: statement.device, number: statement.number))
                return view
            }
            let reason = "zone \(zone): \(finding.explanation); the rest of this pull was not applied"
            findings.fellShort()
            try database.setAccountStateProblem(reason, zone: zone)
            throw SyncClientError(.untrustedAccountState, reason)
        }
        return view
    }

    /// The writes this device may lack without the server hiding them (R62): those the other
    /// devices stated before this device last read the whole feed, when deletions collected before
    /// that read were gone for it. Recorded at a first pull or a full resync that ends in step, but
    /// not at one a finding asked for (it would excuse what the finding found), and at the first
    /// check of a state file from before the record.
    func excusedWrites() throws -> VersionVector {
        guard let witnessed else { return VersionVector() }
        let recorded = try database.excusedWrites(zone)
        if let recorded, !readWholeFeed || findings.readsWholeFeed { return recorded }
        var excused = recorded ?? VersionVector()
        for statement in witnessed.statements { if let extent = statement.extent { excused.join(extent.frontier) } }
        if excused != recorded { try database.recordExcusedWrites(excused, zone: zone) }
        return excused
    }

    /// The finding of a server that no longer holds this device's latest statement.
    var lostStatementFinding: String {
        "zone \(zone): the server no longer holds this device's latest statement (a restored backup or a forked history); the whole feed is read again"
    }

    /// Whether this round states and acknowledges nothing: it found that the server no longer
    /// holds, or no longer serves every device, what this device stated last, and the next round,
    /// which reads the whole feed giving back, states it. Stated now, the finding would be gone
    /// for a later process before anything was given back (R59, decision 0287).
    var defersStatement: Bool { witnessed?.givesBack == true && !findings.readsWholeFeed }

    /// Publishes this device's statement of `view` when it says something new (a state changed
    /// since its last statement, the statements it names as fallen short of changed, the key
    /// epoch moved, or that one is a day old) or the server lost, or does not serve every device,
    /// the last one; and clears the account-state problem unless a finding stands.
    func publishStatement(_ view: ZoneStateView?) async throws {
        guard let witness, let witnessed, let view else { return }
        if findings.standing == nil { try database.setAccountStateProblem(nil, zone: zone) }
        // A statement of an earlier epoch is replaced at once: it shows the other devices the
        // epoch this device reached (decision 0250).
        let fellShortOf = findings.shortOf.map { [$0] } ?? []
        if !witnessed.givesBack, let own = witnessed.own?.statement, view.isStated(by: own), own.fellShortOf == fellShortOf,
            own.epoch == witnessed.epoch ?? VersionSealer.firstEpoch, let madeAt = own.extent?.madeAt,
            ZoneTransport.milliseconds(witness.now()) - madeAt < 24 * 3600 * 1000
        {
            return
        }
        try await witness.publish(view, position: machine.state.cursor, fellShortOf: fellShortOf, to: server, after: witnessed)
    }
}

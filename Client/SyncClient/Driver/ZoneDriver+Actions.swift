import Foundation
import KeychainCrypto
import SyncCore

extension ZoneDriver {
    /// The problem a rejected item shows in `status`.
    static func reason(rejecting rejection: SyncAction.Rejection) -> String {
        switch rejection {
        case .vectorWentBackwards: "its version vector goes backwards"
        case .unknownWriteOfThisDevice: "it claims a write of this device that this device never made"
        case .acknowledgedVersionLeftOut: "the server left out a version of it that it had acknowledged (an older state replayed)"
        }
    }

    /// Performs the machine's actions, and those its answers lead to, until the round ends.
    func perform(_ initial: [SyncAction], report: inout SyncRoundReport) async throws {
        var actions = initial[...]
        var resent = 0
        while let action = actions.popFirst() {
            switch action {
            case .push(let batch):
                guard recordsLoaded else { throw RecordsNeeded() }
                try await refusePushingUnderAnEarlierEpoch()
                // Recorded before it goes out: a device back without its state pushes it again as
                // the same versions (decision 0247).
                effects += batch.items.filter { !$0.version.isDeleted && machine.state.records[$0.item]?.version == $0.version }
                    .map { .sent($0.item, $0.version) }
                // The last batch's answer is recorded and committed while this one is out (R32): a
                // crash before that commit leaves the state at the last batch, unanswered, and the
                // keychain's records of this one as sent, from which a restart marks them (R27).
                let answeredBefore = takeAnsweredEffects(notIn: batch)
                try applyEffects()
                let sealed = try sealer.seal(batch, reusing: await takeSealedAhead())
                lastPushed = Dictionary(
                    zip(batch.items, sealed.items).map { ($0.item, (blob: $1.version.payload, version: $0.version)) }, uniquingKeysWith: { $1 })
                sealAhead(machine.followingBatch)
                effects = answeredBefore
                let response = try await committingWhileOut { [server] in try await server.push(sealed) }
                if response.status == .committed {
                    report.pushed += batch.items.count
                    // Only a version that is still the local one: a batch resent after its
                    // answer was lost may hold a version the user has since replaced (0186).
                    effects += batch.items.filter { machine.state.records[$0.item]?.version == $0.version }
                        .map { .pushed($0.item, $0.version) }
                }
                touched?.formUnion(batch.items.map(\.item))
                actions.append(contentsOf: try answered(machine.receive(response), resent: &resent))
                noteRefusals(of: batch, response: response, report: &report)
            case .pull(let request):
                // The statements are checked before the first pull: each describes a state the
                // pull must cover (decision 0180).
                try await takeStatements()
                guard recordsLoaded || !request.isFullResync else { throw RecordsNeeded() }
                // The pull goes out while the previous page is applied and committed; its answer is
                // only taken after that commit. Serving it acknowledges the cursor it names (R7),
                // so a crash before the commit leaves the server an acknowledgement the state file
                // lacks, which a collection may pass: the device then resyncs, and the deletions
                // collected meanwhile are listed to it (R10a).
                let page = try await committingWhileOut { [server] in try await server.pull(request) }
                if !recordsLoaded, !page.isEmptyPage { try adoptRecords() }
                if case .feedRestored = page { restoreAnnounced() }
                let opened = open(page, writers: try writers(), report: &report)
                let listed = if case .changes(_, let items, _, _, _) = opened { items.map(\.item) } else { [ItemID]() }
                if request.isFullResync {
                    touched = nil
                    readWholeFeed = true
                } else {
                    touched?.formUnion(listed)
                }
                actions.append(contentsOf: try answered(machine.receive(opened), resent: &resent))
                // Listed again: an "unlisted" problem of the item is settled (one set aside
                // because the server refused it stays while the machine keeps it aside, and one
                // held for a key epoch while it waits).
                for item in listed where machine.state.records[item]?.refusal == nil && !heldForAnEpoch.contains(item) {
                    problems.append((item, nil))
                }
            case .store(let item, let version):
                effects.append(.store(item, version))
                applied(item, report: &report)
            case .remove(let item):
                effects.append(.remove(item))
                applied(item, report: &report)
            case .keepInHistory(let item, let version):
                effects.append(.keepInHistory(item, version))
            case .unlisted(let item):
                logger.warning("a full resync did not list an item; kept", metadata: ["zone": "\(zone)", "item": "\(item)"])
                problems.append((item, SyncRoundReport.unlistedProblem))
                // Counted once: a round may read the whole feed twice (an item given back, then
                // left out again, decision 0248).
                if unlistedThisRound.insert(item).inserted { report.unlisted += 1 }
            case .reject(let item, let rejection):
                reject(item, Self.reason(rejecting: rejection), report: &report)
            case .synced:
                let view = try checkStatements(report: report, excusing: try excusedWrites())
                try applyEffects()
                progress.lastSync = Date()
                try commit(view: view)
                // Stated before acknowledged: the server may collect a tombstone only once every
                // active device's latest statement shows the deletion (decision 0203).
                if !defersStatement {
                    try await publishStatement(view)
                    try await server.acknowledge(machine.state.cursor)
                }
                report.inStep = true
            }
        }
        if !effects.isEmpty {
            // The round stopped after a page without a further request (pushes ran out).
            try applyEffects()
            try commit()
        }
    }

    /// Sends `request` and, while it is out, applies and commits what the round decided so far. A
    /// failure there ends the round once the request has ended: what a round sends never depends
    /// on how far a cancelled request got (decision 0186).
    private func committingWhileOut<Answer: Sendable>(_ request: @escaping @Sendable () async throws -> Answer) async throws -> Answer {
        async let answer = request()
        do {
            try applyEffects()
            try commit()
        } catch {
            _ = try? await answer
            throw error
        }
        return try await answer
    }

    /// Takes out of `effects` the `.pushed` of items `batch` does not hold: the last batch's
    /// answer, which need not be recorded before `batch` goes out.
    private func takeAnsweredEffects(notIn batch: PushBatch<ItemVersion>) -> [LocalApply.Effect] {
        let inBatch = Set(batch.items.map(\.item))
        var answered: [LocalApply.Effect] = []
        effects.removeAll { effect in
            guard case .pushed(let item, _) = effect, !inBatch.contains(item) else { return false }
            answered.append(effect)
            return true
        }
        return answered
    }

    /// Seals `items` on another thread while the push goes out: the server works on one request at
    /// a time (R21), so the client's second core would otherwise wait with it.
    private func sealAhead(_ items: [PushedItem<ItemVersion>]) {
        guard !items.isEmpty else { return }
        let sealer = sealer
        sealingAhead = Task.detached { sealer.sealAhead(items) }
    }

    /// What ``sealAhead(_:)`` sealed, once it is done; nil when nothing was being sealed.
    private func takeSealedAhead() async -> SealedAhead? {
        defer { sealingAhead = nil }
        return await sealingAhead?.value
    }

    /// The actions an answer led to; for an answer the machine did not take (it answers another
    /// request, or comes from an older server state than one the device has seen, decision 0188:
    /// the machine still waits for its answer), the request resent instead, as after a lost
    /// answer, a few times in a row (decision 0185): a server back at an older state answers each
    /// page of a longer feed as old once, and the page it is asked again for is taken (malicious
    /// seed 86 at 400 operations, a healed fork, ran out of resends in every round after the heal).
    private func answered(_ next: [SyncAction], resent: inout Int) throws(SyncClientError) -> [SyncAction] {
        guard next.isEmpty, !machine.isIdle else {
            resent = 0
            return next
        }
        resent += 1
        guard resent <= Self.maximumResends else {
            throw SyncClientError(.serverError, "the server kept answering other requests than the one sent, or from an older state")
        }
        logger.warning("an answer was not taken (another request's, or older than what the server said before); resending", metadata: ["zone": "\(zone)"])
        return machine.retry()
    }

    /// How many ignored answers in a row a round resends after before it fails.
    static var maximumResends: Int { 3 }

    private func applied(_ item: ItemID, report: inout SyncRoundReport) {
        problems.append((item, nil))
        report.applied += 1
        if report.applied % 500 == 0 { onProgress?(report.applied) }
    }

    /// Opens every version of a page; an item with a version that fails to open, whose writer
    /// `writers` (the verified device log) does not admit (decision 0275), or whose content is not
    /// the item its ID names, is left out of the page and reported. An item the local store cannot
    /// apply now is held (decision 0137): the machine gets it without versions.
    private func open(_ page: PullResponse<SealedVersion>, writers: (any WriterAdmission)?, report: inout SyncRoundReport) -> PullResponse<ItemVersion> {
        guard case .changes(let requestID, let items, let nextCursor, let hasMore, let collectedAt) = page else {
            return page.versionless() ?? .cursorExpired(requestID: page.requestID)
        }
        var opened: [SyncCore.ChangedItem<ItemVersion>] = []
        opened.reserveCapacity(items.count)
        let wait = items.isEmpty ? .never : local.unlockWait()
        for changed in items {
            do {
                let versions = try openVersions(of: changed, writers: writers)
                if waitsForUnlock(changed.item, versions, wait) {
                    hold(changed)
                    opened.append(.init(item: changed.item, sequence: changed.sequence, versions: []))
                    continue
                }
                if heldItems.contains(changed.item) { release(changed.item) }
                opened.append(.init(item: changed.item, sequence: changed.sequence, versions: versions))
            } catch {
                if let refusal = Self.writerRefusal(error) {
                    reject(changed.item, refusal, report: &report)
                    continue
                }
                if Self.waitsForTheLog(error) || waitsForAnEpoch(changed) {
                    holdForAnEpoch(changed)
                    opened.append(.init(item: changed.item, sequence: changed.sequence, versions: []))
                    continue
                }
                reject(changed.item, Self.unopenable, report: &report)
            }
        }
        return .changes(requestID: requestID, items: opened, nextCursor: nextCursor, hasMore: hasMore, deletionsCollectedAt: collectedAt)
    }

    static var unopenable: String { "a version failed to open (wrong key or tampered)" }

    /// Who may write the versions this round opens, as the witness says (none without one).
    func writers() throws -> (any WriterAdmission)? {
        try witness?.writers()
    }

    /// The problem an item shows when the device log does not admit a version's writer (decision
    /// 0275); nil for any other error.
    static func writerRefusal(_ error: any Error) -> String? {
        guard let error = error as? CryptoError, error.code == .writerNotAdmitted else { return nil }
        return "a version was refused: \(error.message) (a revoked device, or a server forging it)"
    }

    /// Whether `error` says a version's signer is not in the device log this device verified: one
    /// that joined since this device read the log; the item is held as for an epoch not read yet
    /// (decision 0275, as 0251).
    static func waitsForTheLog(_ error: any Error) -> Bool {
        (error as? CryptoError)?.code == .writerNotInTheLog
    }

    /// An item's versions opened, each one's writer admitted by `writers` (the verified device
    /// log, decision 0275, or a group's log, 0291) and each live one's content checked against the
    /// item's ID. A blob this process sealed in its last push, pulled back byte for byte with the
    /// same vector and deleted flag, is the version it sealed (`lastPushed`), while the log still
    /// admits its signer.
    func openVersions(of changed: SyncCore.ChangedItem<SealedVersion>, writers: (any WriterAdmission)?) throws -> [ItemVersion] {
        let signer = sealer.signer?.device ?? machine.state.device
        let own = lastPushed[changed.item].flatMap { writers.map { !$0.stillAdmits(signer) } == true ? nil : $0 }
        return try changed.versions.map { sealed in
            if let own, own.blob == sealed.payload, own.version.vector == sealed.vector, own.version.isDeleted == sealed.isDeleted {
                return own.version
            }
            let version = try sealer.open(sealed.payload, item: changed.item, vector: sealed.vector, deleted: sealed.isDeleted, writers: writers)
            if !version.isDeleted, !local.accepts(version.content, for: changed.item) {
                throw SyncClientError(.rejectedVersions, "content does not match its item ID")
            }
            return version
        }
    }

    /// Records a problem for every item of `batch` the server's answer set aside, and clears the
    /// problem of every item it took.
    private func noteRefusals(of batch: PushBatch<ItemVersion>, response: PushResponse, report: inout SyncRoundReport) {
        let refused = Set(response.refusedItems(of: batch))
        // Given back after the server left it out, and answered as held already: the listing
        // and the answer disagree, and the problem stays (decision 0248).
        let heldAlready = Set(response.results.filter { $0.outcome == .stale }.map(\.item)).intersection(unlistedThisRound)
        for pushed in batch.items where !heldAlready.contains(pushed.item) {
            if let refusal = machine.state.records[pushed.item]?.refusal, refused.contains(pushed.item) {
                logger.warning("pushed version refused; set aside", metadata: ["zone": "\(zone)", "item": "\(pushed.item)", "reason": "\(refusal)"])
                problems.append((pushed.item, refusal.explanation))
                report.setAside += 1
            } else if response.status == .committed, machine.state.records[pushed.item]?.refusal == nil {
                // The server took the item: whatever was wrong with it (set aside, or unlisted by a
                // resync and then changed here to settle it, decision 0106) is settled. Not when
                // the local version is set aside meanwhile: a batch resent after its answer was
                // lost holds an older version, and the one set aside stays a problem (0193).
                retried.remove(pushed.item)
                problems.append((pushed.item, nil))
            }
        }
    }

    func reject(_ item: ItemID, _ reason: String, report: inout SyncRoundReport) {
        logger.warning("pulled version rejected", metadata: ["zone": "\(zone)", "item": "\(item)", "reason": "\(reason)"])
        problems.append((item, reason))
        report.rejected.append("item \(item.rawValue.prefix(12))…: \(reason)")
    }
}

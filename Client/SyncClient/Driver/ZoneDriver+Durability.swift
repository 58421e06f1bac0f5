import KeychainCrypto
import SyncCore

extension ZoneDriver {
    /// Takes the local store's changes after the committed position, a page at a time, each page
    /// committed with the position it reached.
    func takeLocalChanges(timeBound measured: ModificationTimeBound) throws {
        let asideBefore = Set(machine.state.records.lazy.filter { $0.value.refusal != nil }.map(\.key))
        var timeBound = measured
        timeBound.changesTakenBefore = progress.changesTakenAt
        while let taken = try local.takeLocalChanges(after: progress.journalSequence, into: &machine, timeBound: timeBound) {
            progress.journalSequence = taken.position
            for item in taken.items {
                touched?.insert(item)
                refuseUpFront(item, wasSetAside: asideBefore.contains(item))
                recordWrittenOver(item)
            }
            try commit()
        }
        // Every change made before the measurement is taken now: the next take's are later.
        progress.changesTakenAt = measured.serverNow
    }

    /// Tells the local store what a new local version was written over, once the device has
    /// synced the zone (decision 0234): applied with the next effects, before the version is pushed.
    private func recordWrittenOver(_ item: ItemID) {
        guard machine.state.cursor > 0, let record = machine.state.records[item], record.isPending, !record.version.isDeleted,
            !record.version.overwritten.isEmpty
        else { return }
        effects.append(.writtenOver(item, record.version.overwritten))
    }

    /// Sets a new local version aside when it seals larger than the server takes: pushing it
    /// would only fail (decision 0105). A change to an item set aside before clears its problem
    /// unless the new version is refused too.
    private func refuseUpFront(_ item: ItemID, wasSetAside: Bool) {
        guard let record = machine.state.records[item] else { return }
        if record.isPending, !record.version.isDeleted, record.refusal == nil {
            let length = sealer.sealedLength(of: record.version)
            if length > VersionSealer.serverBlobLimit {
                machine.setAside(item, because: .tooLarge)
                problems.append((item, "too large to sync: it seals to \(length) bytes and the server takes at most \(VersionSealer.serverBlobLimit)"))
                return
            }
        }
        if wasSetAside, machine.state.records[item]?.refusal == nil { problems.append((item, nil)) }
    }

    /// Hands the effects decided so far to the local store, which applies them in one
    /// transaction unless an item they touch changed locally after the position the machine
    /// decided from: then the round starts again (``LocalChangeRace``).
    func applyEffects() throws {
        guard !effects.isEmpty else { return }
        try beforeApply?()
        let outcome = try local.apply(LocalApply(
            effects: effects, state: machine.state, committed: committed, position: progress.journalSequence,
            isInitialSync: isInitialSync))
        effects.removeAll()
        switch outcome {
        case .changedLocally(let count):
            logger.info("a local change raced the pulled versions; syncing again", metadata: ["zone": "\(zone)", "items": "\(count)"])
            throw LocalChangeRace()
        case .applied(let failed):
            for (item, reason) in failed.sorted(by: { $0.key < $1.key }) {
                logger.warning("pulled item cannot be applied", metadata: ["zone": "\(zone)", "item": "\(item)"])
                problems.append((item, reason))
            }
        }
        try afterApply?()
    }

    /// Commits the machine's state, the local position and the problems in one transaction;
    /// nothing is written when nothing changed (an idle round costs no fsync).
    /// - Parameter view: The view of the machine's records, when known: kept with them, for a
    ///   start that loads none (``recordsLoaded``).
    func commit(view: ZoneStateView? = nil) throws(SyncClientError) {
        // Unreadable now: the count committed before stands, and the next start reads every tag.
        if let covered = try? local.coveredApplies(by: machine.state) { progress.appliesCovered = covered }
        let resealingNow = resealing.isEmpty || !canSealEveryClass() ? [] : resealing
        guard progress != committedProgress || !problems.isEmpty || !heldChanges.isEmpty || stateChanged || !resealingNow.isEmpty
        else { return }
        try database.saveZone(
            machine.state, previous: committed, changed: touched, resealing: resealingNow, progress: progress, sealer: sealer,
            problems: problems, held: heldChanges, view: view)
        resealing.subtract(resealingNow)
        adoptCommitted()
        touched = []
        heldChanges.removeAll()
        committedProgress = progress
        problems.removeAll()
    }

    /// Whether the machine's state differs from the committed one; only the records of `touched`
    /// can (nil: any can), so only they are compared.
    private var stateChanged: Bool {
        guard let touched else { return machine.state != committed }
        var (now, then) = (machine.state, committed)
        (now.records, then.records) = ([:], [:])
        let changed = now != then || touched.contains { machine.state.records[$0] != committed.records[$0] }
        assert(changed == (machine.state != committed), "a changed record was not in touched")
        return changed
    }

    /// Makes the committed state the machine's, copying the records of `touched` one by one (nil:
    /// the whole state). The two never share their records' storage, which the machine's next
    /// change would otherwise copy whole: 10,000 records at every batch of a first push (issue 35).
    private func adoptCommitted() {
        guard let touched else {
            committed = machine.state
            return
        }
        var records: [ItemID: ZoneSyncState.Record] = [:]
        swap(&records, &committed.records)
        for item in touched { records[item] = machine.state.records[item] }
        committed = machine.state
        committed.records = records
        assert(committed == machine.state, "a changed record was not in touched")
    }
}

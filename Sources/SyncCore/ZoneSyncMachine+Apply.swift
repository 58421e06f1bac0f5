extension ZoneSyncMachine {
    /// Takes items that arrived in earlier pages and that the driver held because its local store
    /// could not apply them then (a "when unlocked" item while the keychain was locked, decision
    /// 0137), in the order they arrived: each is merged as a page's item is, against the state as
    /// it is now. Only between rounds; ignored while one runs.
    public mutating func receiveHeld(_ items: [ChangedItem<ItemVersion>]) -> [SyncAction] {
        guard phase == .idle else { return [] }
        return items.flatMap { apply($0.versions, to: $0.item, at: $0.sequence, resyncing: false, held: true) }
    }

    /// Applies one item's current server state: validates it, resolves siblings (with the local
    /// pending version, if the server has not seen it), and returns the keychain effects.
    ///
    /// In a full resync, a pending resolution whose value the server had, but which none of the
    /// server's versions descends from any more, is stale: the server forgot that value's fate
    /// (its deletion was purged), so the copy is dropped instead of competing (the horizon rule,
    /// for an item the server knows again through an unrelated write).
    ///
    /// `sequence` is where the server listed the item; it becomes the record's, or raises it
    /// (it replaces it when `replacingSequence`: the server's sequences went back, decision 0188).
    mutating func apply(
        _ versions: [ItemVersion], to item: ItemID, at sequence: UInt64, resyncing: Bool, held: Bool = false,
        deletionsCollectedAt: Int64? = nil, replacingSequence: Bool = false
    ) -> [SyncAction] {
        // Even a rejected item holds the server's sequence now, so it does not refuse the next page.
        if replacingSequence, state.records[item] != nil { state.records[item]?.sequence = sequence }
        let record = state.records[item]
        let coveringBaseline = !resyncing && !held && !server.givingBack
        if let rejection = validate(versions, of: item, against: record, coveringBaseline: coveringBaseline) {
            if let record, givesBack(record, of: item, refused: rejection, listing: versions, collectedAt: deletionsCollectedAt) {
                giveBack(item)
            }
            return [.reject(item, rejection)]
        }
        let incoming = ConflictResolution.maximal(versions)
        guard !incoming.isEmpty else { return [] }
        var seen = VersionVector.join(incoming.map(\.vector))
        var candidates = incoming
        var localIsCandidate = false
        var recovered: [SyncAction] = []
        if let record {
            seen.join(record.seen)
            let serverHasLocal = incoming.contains { $0.vector.descends(from: record.version.vector) }
            let forgotten = resyncing && record.baseline.contains { $0.descends(from: record.version.origin) }
                && !incoming.contains { $0.vector.descends(from: record.version.origin) }
            if record.isPending, !serverHasLocal, !forgotten {
                let copy = resyncing && isRecovering && record.baseline.isEmpty
                    ? recoveredCopy(record, against: incoming, deletionsCollectedAt: deletionsCollectedAt) : .ownWrite
                if copy == .laterDeletion {
                    // A deletion replayed without state, made after every value the server has:
                    // the later write it is (0175), though its vector may not show it (decision
                    // 0196). It supersedes them; they go to history.
                    var deletion = record.version
                    for version in incoming where !version.isDeleted {
                        deletion.overwritten.join(version.origin)
                        recovered.append(.keepInHistory(item, version))
                    }
                    candidates = ConflictResolution.maximal(incoming + [deletion])
                    localIsCandidate = candidates.contains(deletion)
                } else if copy != .ownWrite {
                    // A copy from before the state was lost: the server's value, older than its
                    // deletion, or from before a collection of deletions. The server's versions
                    // stand alone; a copy with another value goes to history.
                    if copy != .sameAsServer { recovered.append(.keepInHistory(item, record.version)) }
                } else {
                    candidates = ConflictResolution.maximal(incoming + [record.version])
                    localIsCandidate = candidates.contains(record.version)
                }
            } else if record.isPending, forgotten, !record.version.isDeleted {
                // Dropped by the horizon rule, though it may be a value the server lost rather
                // than one whose deletion it collected (a value given back after a fork, decision
                // 0253): kept in the item's history, not lost.
                recovered.append(.keepInHistory(item, record.version))
            } else if resyncing, lostByServer(record, item: item, listing: incoming, collectedAt: deletionsCollectedAt) {
                // The server had this value and lists the item without it, though no collection
                // can have removed its deletion: it lost it (decision 0248). It competes again.
                candidates = ConflictResolution.maximal(incoming + [record.version])
                localIsCandidate = candidates.contains(record.version)
                server.givenBack.insert(item)
            } else if resyncing, !record.isPending, !record.version.isDeleted, !serverHasLocal,
                !incoming.contains(where: { $0.vector.descends(from: record.version.origin) || $0.sameValue(as: record.version) })
            {
                if incoming.allSatisfy({ record.version.vector.descends(from: $0.vector) }) {
                    // Listed older than it: no deletion over it was collected (the server would
                    // list that), so the server never stored it or lost it. It competes, and wins
                    // (R47; a copy R49 C2 kept while unlisted).
                    candidates = [record.version]
                    localIsCandidate = true
                } else {
                    // Replaced by versions that never saw it: deleted and collected since, or lost
                    // by the server. Kept in the item's history rather than dropped (decision 0248).
                    recovered.append(.keepInHistory(item, record.version))
                }
            }
        }
        guard let winner = ConflictResolution.resolve(candidates) else { return [] }
        var actions = recovered
        var version: ItemVersion
        let isPending: Bool
        if candidates.allSatisfy({ $0.sameValue(as: winner) }) {
            // One value (possibly the same resolution made on several devices): nothing to resolve.
            version = winner
            if candidates.count > 1 {
                version.vector = .join(candidates.map(\.vector))
                version.overwritten = .join(candidates.map(\.overwritten))
            }
            isPending = candidates.count == 1 && localIsCandidate
        } else {
            state.writeCounter += 1
            let vector = seen.written(by: state.device, counter: state.writeCounter)
            version = ConflictResolution.resolution(of: candidates, vector: vector) ?? winner
            isPending = true
            var kept: [ItemVersion] = []
            let contenders = ConflictResolution.contenders(candidates)
            for loser in contenders.isEmpty ? candidates : contenders where !loser.isDeleted && !loser.sameValue(as: winner) {
                if kept.contains(where: { $0.sameValue(as: loser) }) { continue }
                kept.append(loser)
                actions.append(.keepInHistory(item, loser))
            }
        }
        actions += keychainEffect(of: version, replacing: record?.version, item: item)
        seen.join(version.vector)
        // A version set aside stays aside while it is still the local version.
        let refusal = isPending && record?.version == version ? record?.refusal : nil
        let listedAt = replacingSequence ? sequence : max(record?.sequence ?? 0, sequence)
        var taken = ZoneSyncState.Record(version: version, isPending: isPending, baseline: [], seen: seen, refusal: refusal, sequence: listedAt)
        taken.setBaseline(incoming)
        state.records[item] = taken
        return actions
    }

    /// The end of a full resync. Absence is not deletion (docs/design.md §5, decision 0106): an item the
    /// server did not list is never removed here. A value the server never had (a local change
    /// since the baseline, or an item never uploaded) is a concurrent update: it stays pending and
    /// is pushed. A value the server had and no longer lists (a deletion it collected, or data it
    /// lost or withholds) is kept, not pushed, and reported. A local deletion the server no
    /// longer lists is forgotten: the item is gone here already.
    ///
    /// After a server's restore (decision 0154) the server lost what it no longer lists, so a
    /// version (or deletion) it had acknowledged or sent is given back instead: pushed again as it
    /// is, its vector unchanged, so it merges with what other devices give back by the usual rule.
    ///
    /// A pending version pushed in a batch whose answer was lost, and whose resend the server
    /// refused as too old, may have been stored, deleted and the deletion collected (decision
    /// 0233): if the server collected deletions since it was written, it is kept and reported, not
    /// pushed.
    ///
    /// A device that returns without its sync state (decision 0175) cannot tell a copy of an item
    /// deleted meanwhile, whose tombstone the server collected, from a write it never pushed. A
    /// copy last modified before the server's latest collection (plus the clock window of 0108)
    /// may be the former: it is kept and reported like a value the server had, not pushed.
    mutating func reconcileResync(mentioned: Set<ItemID>, deletionsCollectedAt: Int64? = nil) -> [SyncAction] {
        var actions: [SyncAction] = []
        for (item, record) in state.records.sorted(by: { $0.key < $1.key }) where !mentioned.contains(item) {
            let serverHadValue = record.baseline.contains { $0.descends(from: record.version.origin) }
            if record.isPending, !serverHadValue, mayPredateCollectedDeletion(record, collectedAt: deletionsCollectedAt, listed: false) {
                state.records[item]?.isPending = false
                actions.append(.unlisted(item))
                continue
            }
            if record.isPending, !serverHadValue, record.mayBeOnServer, !record.version.isDeleted,
                let collectedAt = deletionsCollectedAt, record.version.modifiedAt <= collectedAt &+ ModificationTimeBound.window
            {
                // Perhaps stored by a send whose answer was lost, deleted since, and the deletion
                // collected: kept and reported like a value the server had (decision 0233).
                state.records[item]?.isPending = false
                state.records[item]?.mayBeOnServer = false
                actions.append(.unlisted(item))
                continue
            }
            if record.isPending, !serverHadValue {
                state.records[item]?.setBaseline([])
                continue
            }
            if server.givingBack, !record.baseline.isEmpty, !localStore.valueUnknown.contains(item) {
                // The server lost it: it holds nothing of it now, so the record is a value to push
                // until the server takes it, as any the server never had (R58).
                state.records[item]?.isPending = true
                state.records[item]?.setBaseline([])
                continue
            }
            if lostByServer(record, item: item, listing: [], collectedAt: deletionsCollectedAt) {
                // Had by the server, and no collection can have removed its deletion: the server
                // lost it (a restore it did not announce, a fork). Given back, and a value
                // reported (decision 0248).
                giveBack(item)
                if !record.version.isDeleted { actions.append(.unlisted(item)) }
                continue
            }
            // A deletion the local store may not show (it took a later version before a crash).
            if record.version.isDeleted, !localStore.valueUnknown.contains(item) { continue }
            localStore.valueUnknown.remove(item)
            state.records[item]?.isPending = false
            // The server holds nothing of it now: the state's view of the server (the baselines,
            // which statements describe, decision 0203) says so too.
            state.records[item]?.setBaseline([])
            actions.append(.unlisted(item))
        }
        // Taken by the local store before a crash, or by an earlier enrolment, unknown to the state,
        // and no longer listed. It stays unknown: the store still holds it, so a version listed
        // later (a deletion above all) is applied to it (decision 0194).
        for item in localStore.valueUnknown.sorted() where !mentioned.contains(item) && state.records[item] == nil {
            actions.append(.unlisted(item))
        }
        return actions
    }

    /// Whether `record`, a copy taken without sync state by a device that synced before, was last
    /// modified before the server last collected tombstones (within the clock window of 0108):
    /// then its item may have been deleted and the deletion collected.
    ///
    /// - Parameter listed: Whether the server lists the item. A listed item's versions tell
    ///   whether an edit of a version the local store had applied is a later write; an item the
    ///   server no longer lists at all had that version once, so it was deleted since, and the
    ///   edit may be what was deleted: pushed before the state was lost, its answer lost (0196).
    private func mayPredateCollectedDeletion(_ record: ZoneSyncState.Record, collectedAt: Int64?, listed: Bool = true) -> Bool {
        guard localStore.returnsWithoutState, isRecovering, record.baseline.isEmpty, !record.version.isDeleted, let collectedAt else {
            return false
        }
        // A listed item's change built over a version the local store knows it had applied is an
        // edit of that version, not a copy of unknown age.
        guard !listed || namesOnlyThisDevice(record.version.vector) else { return false }
        return record.version.modifiedAt <= collectedAt &+ ModificationTimeBound.window
    }

    /// Whether `vector` names only this device's writes: a copy's own new write, whose age only its
    /// time tells, not a version it was pushed or taken as (R48).
    private func namesOnlyThisDevice(_ vector: VersionVector) -> Bool {
        vector.sortedEntries.allSatisfy { $0.device == state.device }
    }

    /// What a local version made without sync state is, against the server's versions of it.
    enum RecoveredCopy {
        /// A write of its own: it competes as any pending version does.
        case ownWrite
        /// The value the server has (the same content).
        case sameAsServer
        /// A copy last written before the server's deletion of the item: stale.
        case olderThanDeletion
        /// A copy, on a device that synced before, last written before the server last collected
        /// deletions: it may be a value deleted since, whose tombstone is gone (decision 0175).
        case predatesCollection
        /// A deletion, on a device that synced before, made after every live version the server
        /// has: its vector may be built over an older version than the device showed (decision 0196).
        case laterDeletion
    }

    func recoveredCopy(_ record: ZoneSyncState.Record, against incoming: [ItemVersion], deletionsCollectedAt: Int64?) -> RecoveredCopy {
        let local = record.version
        if local.isDeleted, localStore.returnsWithoutState, incoming.contains(where: { !$0.isDeleted }),
            incoming.allSatisfy({ $0.isDeleted || $0.modifiedAt <= local.modifiedAt })
        {
            return .laterDeletion
        }
        if incoming.contains(where: { !$0.isDeleted && $0.content == local.content }) { return .sameAsServer }
        // Only a copy whose vector names no other device's write is judged by its time: one that
        // carries the version it was sent as (R53) is judged by vectors, as any listed version.
        if !local.isDeleted, incoming.allSatisfy(\.isDeleted), let deletedAt = incoming.map(\.modifiedAt).max(),
            local.modifiedAt <= deletedAt, namesOnlyThisDevice(local.vector)
        {
            return .olderThanDeletion
        }
        return mayPredateCollectedDeletion(record, collectedAt: deletionsCollectedAt) ? .predatesCollection : .ownWrite
    }

    /// Why `versions`, the server's versions of an item, cannot be taken; nil when they can.
    /// - Parameter coveringBaseline: Whether every live version of the record's baseline must be
    ///   covered: some listed version descends from it (decision 0235). So in a pull from the
    ///   cursor: an honest server replaces a version only by one that descends from it, and a
    ///   version that replaced it is collected only after every active device read it (a deletion
    ///   of the baseline's may be, and the item written anew). Not in a full resync (a
    ///   deletion may have been collected and the item written anew), after a restore (the server
    ///   lost versions), nor for an arrival held since before the baseline was set (0137).
    private func validate(
        _ versions: [ItemVersion], of item: ItemID, against record: ZoneSyncState.Record?, coveringBaseline: Bool
    ) -> SyncAction.Rejection? {
        // What the store took from the server, unknown to the state (decision 0236), after a
        // restore too: the restored server's older version is refused until a device gives the
        // newer one back, rather than applied over it (R35).
        let applied = localStore.appliedBefore[item] ?? []
        for version in versions {
            if version.vector[state.device] > state.writeCounter { return .unknownWriteOfThisDevice }
            if let record, record.baseline.contains(where: { $0.compare(to: version.vector) == .dominates }) {
                return .vectorWentBackwards
            }
        }
        // Against the join of the listing: a store's tag may be the join of the versions it took.
        if !versions.isEmpty, applied.contains(where: { $0.compare(to: .join(versions.map(\.vector))) == .dominates }) {
            return .vectorWentBackwards
        }
        // No versions: an arrival the driver holds (0137), taken later by `receiveHeld`.
        // Live versions only: a deletion is collected once every device read it, and the item may
        // then be written anew by a device that never saw it.
        if coveringBaseline, !versions.isEmpty, let record,
            record.baseline.contains(where: { acknowledged in
                !record.deletedBaseline.contains(acknowledged) && !versions.contains { $0.vector.descends(from: acknowledged) }
            })
        {
            return .acknowledgedVersionLeftOut
        }
        return nil
    }

    private mutating func keychainEffect(of version: ItemVersion, replacing old: ItemVersion?, item: ItemID) -> [SyncAction] {
        let unknown = localStore.valueUnknown.remove(item) != nil
        if version.isDeleted {
            guard unknown || old.map({ !$0.isDeleted }) == true else { return [] }
            return [.remove(item)]
        }
        if !unknown, let old, !old.isDeleted, old.sameValue(as: version) { return [] }
        return [.store(item, version)]
    }
}

/// The client side of syncing one zone: a value-type state machine whose event methods return the
/// actions its driver performs. It decides what to push from the local journal, what to apply
/// from pulled versions, resolves siblings with ``ConflictResolution``, and reconciles a full
/// resync with the horizon rule. It does no I/O and reads no clock.
///
/// A round: push the unanswered batch, or the pending changes, if any; then pull until the feed
/// has no more; then push what resolving conflicts produced; then ``SyncAction/synced``.
/// One request is outstanding at a time; ``retry()`` resends it when the driver's timer fires.
///
/// Durability contract: ``state`` is durable and must be committed, after the local store's
/// effects of the returned actions, before the driver sends any request. They are two files and
/// two commits, the local store's first (decision 0107); a crash between them is what rule R56
/// recovers. The rest (the phase, the resync's progress) is lost on a crash;
/// ``init(restoring:configuration:)`` resumes.
public struct ZoneSyncMachine: Sendable {
    /// Tunables.
    public struct Configuration: Sendable, Equatable {
        /// The most items asked for per pull.
        public var pageSize: Int
        /// The most versions per pushed batch.
        public var maximumBatchSize: Int
        /// The most pushes in one round before it ends (a refused push is retried next round).
        public var maximumPushesPerRound: Int
        /// The most content bytes (``ItemVersion/content``) per pushed batch, so that its request
        /// stays under the server's body limit; a batch always takes its first version, however
        /// large (decision 0224).
        public var maximumBatchContentBytes: Int

        /// The defaults: pages of 200, batches of 100, 4 pushes per round, no byte bound.
        public init(pageSize: Int = 200, maximumBatchSize: Int = 100, maximumPushesPerRound: Int = 4, maximumBatchContentBytes: Int = .max) {
            self.pageSize = pageSize
            self.maximumBatchSize = maximumBatchSize
            self.maximumPushesPerRound = maximumPushesPerRound
            self.maximumBatchContentBytes = maximumBatchContentBytes
        }
    }

    enum Phase: Hashable, Sendable {
        case idle
        case pushing(batchID: UInt64)
        /// `mentioned` is set during a full resync: the items its pages mentioned so far.
        case pulling(PullRequest, mentioned: Set<ItemID>?)
    }

    /// The durable state.
    public internal(set) var state: ZoneSyncState
    /// The tunables.
    public let configuration: Configuration
    var phase: Phase = .idle
    var requestNumber: UInt64 = 0
    var pushesThisRound = 0
    /// What this process learned of the server, and what the driver tells of the local store.
    var server = ServerKnowledge()
    public var localStore = LocalStoreKnowledge()
    /// The versions the batch after the one just handed out takes if that one is answered in full:
    /// a hint that lets the driver seal them while the request is out. Not state: nothing decides
    /// on it, and the next batch is chosen afresh.
    public private(set) var followingBatch: [PushedItem<ItemVersion>] = []

    /// A machine for a device that never synced `zone`.
    public init(device: DeviceID, zone: ZoneID, configuration: Configuration = Configuration()) {
        self.init(restoring: ZoneSyncState(device: device, zone: zone), configuration: configuration)
    }

    /// A machine resuming from durable state after a start or a crash; starts a new epoch, so
    /// answers to requests made before are ignored.
    public init(restoring state: ZoneSyncState, configuration: Configuration = Configuration()) {
        self.state = state
        self.state.epoch += 1
        self.configuration = configuration
    }

    /// Gives a machine started from a state without its records (a driver that read only the rest,
    /// finding nothing waiting) the records that state left out. Nothing the machine decided since
    /// read a record, so it goes on as if it had started with them.
    public mutating func adopt(records: [ItemID: ZoneSyncState.Record]) {
        precondition(state.records.isEmpty, "a machine adopts records only while it has none")
        state.records = records
    }

    /// Marks items whose local store is ahead of the state (see ``LocalStoreKnowledge/valueUnknown``); the
    /// driver finds them when it starts from the committed state.
    ///
    /// - Parameter applied: Where the store knows it, the version it took from the server for
    ///   such an item (its version tag; a key-value store's siblings): an honest server never lists an older one again, so a
    ///   listing older than it is refused as a rollback (decision 0236), also by a device that
    ///   returns without its sync state.
    public mutating func markLocalValueUnknown(_ items: some Sequence<ItemID>, applied: [ItemID: [VersionVector]] = [:]) {
        localStore.valueUnknown.formUnion(items)
        localStore.appliedBefore.merge(applied) { _, new in new }
    }

    /// Marks the pending versions of `items` as perhaps stored by the server (R27): the local
    /// store recorded them sent after this state was committed, and a batch goes out before the
    /// state that names it is committed (R32).
    public mutating func markSentSinceCommit(_ items: some Sequence<ItemID>) {
        for item in items where state.records[item]?.isPending == true { state.records[item]?.mayBeOnServer = true }
    }

    /// Whether no round is running.
    public var isIdle: Bool { phase == .idle }

    /// Whether a full resync is under way.
    package var isResyncing: Bool {
        if case .pulling(_, mentioned: .some) = phase { return true }
        return false
    }

    /// Whether some local change still has to be pushed (one set aside does not count).
    public var hasPendingChanges: Bool {
        localStore.waitingForUnlock.isEmpty
            ? state.records.values.contains(where: \.awaitsPush)
            : state.records.contains { $0.value.awaitsPush && !localStore.waitingForUnlock.contains($0.key) }
    }

    /// Sets a pending version aside, unpushed, because the server will not take it (the driver
    /// knows its sealed size is over the limit): a per-item problem until the item changes.
    public mutating func setAside(_ item: ItemID, because refusal: ItemRefusal) {
        guard state.records[item]?.isPending == true else { return }
        state.records[item]?.refusal = refusal
    }

    /// Puts back, to be pushed again, the versions set aside for a refusal that may pass later
    /// (a quota; the account may have room now). A version too large stays aside until it changes.
    /// - Returns: The items put back.
    @discardableResult
    public mutating func retrySetAside() -> [ItemID] {
        let items = state.records.filter { $0.value.refusal != nil && $0.value.refusal != .tooLarge }.map(\.key)
        for item in items { state.records[item]?.refusal = nil }
        return items
    }

    /// Takes a change from the local journal. Changes of items that never leave the device are
    /// ignored; a synchronizable one becomes a new pending version whose vector dominates
    /// everything the device has seen of the item. Pushed by the next round.
    public mutating func localChange(_ change: LocalChange) -> [SyncAction] {
        guard change.scope.leavesDevice else { return [] }
        let record = state.records[change.item]
        let known = record?.seen ?? VersionVector()
        // The change was read from the store: the state now holds the store's value.
        localStore.valueUnknown.remove(change.item)
        // Deleting what the state and the store both know as absent changes nothing.
        if change.content == nil, record?.version.isDeleted ?? true, known.descends(from: change.basedOn) { return [] }
        if let sent = change.sentBefore, !sent.isDeleted, let content = change.content, record == nil, isRecovering {
            // Pushed by an earlier enrolment, its answer never came: pushed again as that same
            // version (the server may hold it, and a deletion made over it elsewhere supersedes
            // it), or kept if the server collected deletions since (decision 0247).
            var version = sent
            version.content = content
            state.writeCounter = max(state.writeCounter, sent.vector[state.device])
            state.records[change.item] = .init(
                version: version, isPending: true, baseline: [], seen: sent.vector.joined(with: change.basedOn), mayBeOnServer: true)
            return []
        }
        // A resolution the store took before the crash may hold a counter the state never committed.
        state.writeCounter = max(state.writeCounter, change.basedOn[state.device]) + 1
        let seen = known.joined(with: change.basedOn)
        let vector = seen.written(by: state.device, counter: state.writeCounter)
        let version = ItemVersion(
            vector: vector, isDeleted: change.content == nil, modifiedAt: change.modifiedAt,
            device: state.device, content: change.content ?? [], overwritten: seen
        )
        state.records[change.item] = .init(
            version: version, isPending: true, baseline: record?.baseline ?? [], seen: vector, sequence: record?.sequence ?? 0,
            deletedBaseline: record?.deletedBaseline ?? [])
        return []
    }

    /// Starts a round unless one is running.
    ///
    /// - Parameter reconcilingFirst: For a device without sync state (a new device, re-enrolment,
    ///   a lost state file) whose local items were taken as they are: a full resync reconciles
    ///   them against the account's state before any of them is pushed (decision 0106). Only
    ///   while the zone was never pulled.
    /// - Parameter resyncing: Start with a full resync: the device found the state it was served
    ///   short of what another device stated (decision 0203), and reads the whole feed again.
    /// - Parameter givingBack: With `resyncing`: the server lost data it held for this device (its
    ///   latest statement is gone: a restore it did not announce, a fork, decision 0248). The
    ///   resync gives back what the server no longer has, as after an announced restore (0154).
    public mutating func startSync(reconcilingFirst: Bool = false, resyncing: Bool = false, givingBack: Bool = false) -> [SyncAction] {
        guard phase == .idle else { return [] }
        pushesThisRound = 0
        if reconcilingFirst, isRecovering, state.unansweredBatch == nil, hasPendingChanges {
            return pull(after: 0, mentioned: [])
        }
        if resyncing, state.unansweredBatch == nil {
            if givingBack {
                server.givingBack = true
                state.latestSequence = 0
            }
            return pull(after: 0, mentioned: [])
        }
        return pushOrPull()
    }

    /// Whether the device has never completed a pull of the zone: its local versions have no
    /// baselines, and a full resync reconciles them without (decision 0106).
    var isRecovering: Bool { state.cursor == 0 }

    /// Resends the outstanding request (the driver's timer fired without an answer). A pull gets a
    /// new request ID; a batch is resent unchanged.
    public mutating func retry() -> [SyncAction] {
        switch phase {
        case .idle:
            return []
        case .pushing:
            guard let batch = state.unansweredBatch else { return pull(after: state.cursor, mentioned: nil) }
            server.sentOnce = nil
            return [.push(batch)]
        case .pulling(let request, let mentioned):
            return pull(after: request.cursor, mentioned: mentioned)
        }
    }

    /// Takes the server's answer to a push; answers to anything but the unanswered batch are
    /// ignored. Acknowledged versions become baselines; then the round pulls.
    public mutating func receive(_ response: PushResponse) -> [SyncAction] {
        guard case .pushing(let batchID) = phase, batchID == response.batchID,
            let batch = state.unansweredBatch, batch.batchID == batchID
        else { return [] }
        state.unansweredBatch = nil
        if response.status == .cursorExpired {
            // Nothing of this send was stored; an earlier send of the batch, whose answer was lost,
            // may have been (the server keeps no batch memory, and a collection since moved the
            // horizon past the batch's cursor).
            if server.sentOnce != batchID { markMayBeOnServer(batch) }
            return pull(after: 0, mentioned: [])
        }
        if response.status == .tooLarge, batch.items.count > 1 {
            // Nothing was stored: the batch is pushed again in batches of half its size.
            server.batchSizeLimit = max(1, batch.items.count / 2)
            if pushesThisRound < configuration.maximumPushesPerRound { return pushOrPull() }
            return pull(after: state.cursor, mentioned: nil)
        }
        if let reason = response.refusalReason {
            // Set the refused items aside (their versions as pushed) and push the rest at once.
            let refused = Set(response.refusedItems(of: batch))
            var setAside = false
            for pushed in batch.items where refused.contains(pushed.item) && state.records[pushed.item]?.version == pushed.version {
                state.records[pushed.item]?.refusal = reason
                // Merged past the horizon as a version the server does not hold (not stale): no
                // earlier send stored it, and one still on its way meets the same refusal (R25).
                if reason != .tooLarge { state.records[pushed.item]?.mayBeOnServer = false }
                setAside = true
            }
            if setAside, pushesThisRound < configuration.maximumPushesPerRound { return pushOrPull() }
        }
        if response.status == .committed {
            let continuesTheFeed = storedAloneRightAfterTheCursor(batch, response)
            for (pushed, result) in zip(batch.items, response.results) where result.item == pushed.item {
                acknowledge(pushed, at: result.sequence)
                if server.givenBack.remove(pushed.item) != nil, result.outcome == .stale { server.heldButUnlisted.insert(pushed.item) }
            }
            if let latest = response.latestSequence { state.latestSequence = max(state.latestSequence, latest) }
            if continuesTheFeed, hasPendingChanges, pushesThisRound < configuration.maximumPushesPerRound {
                // The feed after the cursor is this batch, stored as pushed: the next batch goes
                // out without pulling it back; the round's last pull reads on from here (R23a).
                state.cursor += UInt64(batch.items.count)
                return pushOrPull()
            }
        }
        return pull(after: state.cursor, mentioned: nil)
    }

    /// Whether the server's answer says it stored every version of `batch` alone (no sibling, none
    /// stale) at the sequences right after the cursor, in order, and knows of nothing later, while
    /// this device knows of nothing later either: the feed from the cursor to there is the batch.
    /// The server's word: a server that lies so hides another device's write, which the round's
    /// statement check finds (R62).
    private func storedAloneRightAfterTheCursor(_ batch: PushBatch<ItemVersion>, _ response: PushResponse) -> Bool {
        let last = state.cursor + UInt64(batch.items.count)
        guard response.results.count == batch.items.count, response.latestSequence == last, state.latestSequence <= state.cursor else {
            return false
        }
        for (offset, (pushed, result)) in zip(batch.items, response.results).enumerated() {
            guard result.item == pushed.item, result.outcome == .applied, result.sequence == state.cursor + UInt64(offset) + 1 else { return false }
        }
        return true
    }

    /// Takes a pulled page, its versions already opened by the driver; answers to anything but
    /// the outstanding pull are ignored.
    public mutating func receive(_ response: PullResponse<ItemVersion>) -> [SyncAction] {
        guard case .pulling(let request, var mentioned) = phase, request.requestID == response.requestID else {
            return []
        }
        let refusedBefore = server.refusedAnOldPage
        server.refusedAnOldPage = false
        switch response {
        case .cursorExpired:
            server.givingBack = false
            return pull(after: 0, mentioned: [])
        case .feedRestored:
            // The server went back to a backup: what it reported before no longer bounds its feed.
            server.givingBack = true
            state.latestSequence = 0
            return pull(after: 0, mentioned: [])
        case .changes(_, let items, let nextCursor, let hasMore, let collectedAt):
            let isOld = predatesWhatTheServerSaid(items, nextCursor: nextCursor, hasMore: hasMore)
            if isOld, !refusedBefore {
                // Taken as a late answer: neither its items nor its cursor; the driver resends.
                server.refusedAnOldPage = true
                return []
            }
            // Asked again, the server answers as old: that is its state now (a restore without
            // the sequence jump of 0153, or a server that holds back, which it can always do).
            if isOld { state.latestSequence = min(state.latestSequence, nextCursor) }
            var actions: [SyncAction] = []
            for changed in items {
                mentioned?.insert(changed.item)
                let known = state.records[changed.item] != nil
                let applied = apply(
                    changed.versions, to: changed.item, at: changed.sequence, resyncing: mentioned != nil,
                    deletionsCollectedAt: collectedAt, replacingSequence: isOld || server.givingBack)
                // An item held ahead, listed older than the store took: listed again next (R35).
                if !known, localStore.valueUnknown.contains(changed.item), changed.sequence > 0,
                    applied.contains(.reject(changed.item, .vectorWentBackwards))
                {
                    server.readAgainFrom = min(server.readAgainFrom ?? .max, changed.sequence - 1)
                }
                actions += applied
            }
            if !hasMore { state.latestSequence = max(state.latestSequence, nextCursor) }
            if hasMore {
                // A resync's position is not a feed cursor: a crash restarts the resync.
                if mentioned == nil { state.cursor = min(nextCursor, server.readAgainFrom ?? .max) }
                return actions + pull(after: nextCursor, mentioned: mentioned)
            }
            if let mentioned {
                actions += reconcileResync(mentioned: mentioned, deletionsCollectedAt: collectedAt)
                server.givingBack = false
            }
            state.cursor = min(nextCursor, server.readAgainFrom ?? .max)
            server.readAgainFrom = nil
            return actions + endOfPull()
        }
    }

    private mutating func endOfPull() -> [SyncAction] {
        if hasPendingChanges {
            if pushesThisRound < configuration.maximumPushesPerRound { return pushOrPull() }
            phase = .idle
            return []
        }
        phase = .idle
        return [.synced]
    }

    private mutating func pushOrPull() -> [SyncAction] {
        if let batch = state.unansweredBatch {
            followingBatch = []
            phase = .pushing(batchID: batch.batchID)
            pushesThisRound += 1
            server.sentOnce = nil
            return [.push(batch)]
        }
        let (pending, following) = nextBatchItems()
        followingBatch = following
        guard !pending.isEmpty else { return pull(after: state.cursor, mentioned: nil) }
        let batch = PushBatch(
            device: state.device, zone: state.zone, batchID: state.nextBatchID, cursor: state.cursor, items: pending)
        state.nextBatchID += 1
        state.unansweredBatch = batch
        server.sentOnce = batch.batchID
        phase = .pushing(batchID: batch.batchID)
        pushesThisRound += 1
        return [.push(batch)]
    }

    /// The pending versions of the next batch, in item order: at most the batch size (or the
    /// halved one, ``batchSizeLimit``) and the content bytes, but at least one; and those of the
    /// batch after it, taken from the same sorted list (``followingBatch``).
    private func nextBatchItems() -> (batch: [PushedItem<ItemVersion>], following: [PushedItem<ItemVersion>]) {
        // The IDs first: filtering the records themselves copied every pending record at every
        // push, O(items) per batch (decision 0198).
        let waiting = localStore.waitingForUnlock
        var pending: [ItemID] = []
        for (item, record) in state.records where record.awaitsPush && (waiting.isEmpty || !waiting.contains(item)) { pending.append(item) }
        pending.sort()
        let count = min(configuration.maximumBatchSize, server.batchSizeLimit ?? .max)
        var batches: [[PushedItem<ItemVersion>]] = [[], []]
        var bytes = 0
        var index = 0
        for item in pending {
            guard let record = state.records[item] else { break }
            bytes += record.version.content.count
            if batches[index].count == count || (!batches[index].isEmpty && bytes > configuration.maximumBatchContentBytes) {
                guard index == 0 else { break }
                index = 1
                bytes = record.version.content.count
            }
            batches[index].append(PushedItem(item: item, version: record.version))
        }
        return (batches[0], batches[1])
    }

    private mutating func pull(after cursor: UInt64, mentioned: Set<ItemID>?) -> [SyncAction] {
        requestNumber += 1
        // A resync of a device that holds items asks for the deletions the server collected too:
        // the evidence on which it removes an unchanged copy the account deleted (rule R10a).
        var request = PullRequest(
            requestID: RequestID(epoch: state.epoch, number: requestNumber), device: state.device,
            zone: state.zone, cursor: cursor, isFullResync: mentioned != nil, limit: configuration.pageSize,
            includesCollectedDeletions: mentioned != nil && !(state.records.isEmpty && localStore.valueUnknown.isEmpty)
        )
        // What the device was told beyond its cursor: a server restored from a backup that ended
        // below it says so even to a cursor the backup covers (R9). A full resync is always served.
        if mentioned == nil, state.latestSequence > cursor { request.told = state.latestSequence }
        phase = .pulling(request, mentioned: mentioned)
        return [.pull(request)]
    }

    private mutating func acknowledge(_ pushed: PushedItem<ItemVersion>, at sequence: UInt64?) {
        guard var record = state.records[pushed.item] else { return }
        record.setBaseline([pushed.version])
        if record.version == pushed.version {
            record.isPending = false
            record.mayBeOnServer = false
        }
        if let sequence { record.sequence = max(record.sequence, sequence) }
        state.records[pushed.item] = record
    }

    /// Marks the versions of `batch` that are still the local ones as perhaps stored by the server
    /// (decision 0233): a full resync that does not list them keeps and reports them instead of
    /// pushing them again over a deletion the server may have collected.
    private mutating func markMayBeOnServer(_ batch: PushBatch<ItemVersion>) {
        for pushed in batch.items where state.records[pushed.item]?.version == pushed.version {
            state.records[pushed.item]?.mayBeOnServer = true
        }
    }

    /// Whether a page comes from an older state of the server than one it already reported to
    /// this device (decision 0188): sequence numbers only grow on a server, so the page lists an
    /// item below the sequence the server gave or listed it at before, or, the last of a pull,
    /// ends the feed below the account's latest sequence that an earlier answer reported. During
    /// the resync that follows a restore (0154) the items' sequences went back for good.
    private func predatesWhatTheServerSaid(_ items: [ChangedItem<ItemVersion>], nextCursor: UInt64, hasMore: Bool) -> Bool {
        if !hasMore, nextCursor < state.latestSequence { return true }
        if server.givingBack { return false }
        return items.contains { (state.records[$0.item]?.sequence ?? 0) > $0.sequence }
    }
}

/// The reference model of one account's server state: what the real server stores in SQL, as a
/// value with pure operations, so the simulation can drive it and the server can be checked
/// against it.
///
/// - Every accepted write gets the account's next sequence number (shared by the zones); an
///   item's state in the feed is its current siblings at the sequence of its last change.
/// - A push is a batch merged with ``ServerMerge`` all or nothing. A batch made at a cursor below
///   the zone's horizon is refused: its versions may revive a deletion the device never saw.
/// - Devices acknowledge positions by pulling; a tombstone is purged once every active device has
///   acknowledged past it. A zone's *horizon* is the highest sequence of a purged tombstone: a
///   cursor below it is too old (the device may have missed a purge) and gets
///   ``PullResponse/cursorExpired(requestID:)``. A device that was inactive when tombstones it had
///   not acknowledged were purged must restart even a resync in progress.
/// - A device is active while it was last seen within ``Configuration/inactivityLimit``; one away
///   longer no longer holds tombstones back and resyncs in full when it returns.
///
/// Time is a value passed in (milliseconds); the model reads no clock.
public struct ServerModel: Sendable, Equatable {
    /// Tunables, with the product's defaults.
    public struct Configuration: Sendable, Equatable {
        /// How long a device may stay silent and still hold tombstones back, in milliseconds.
        public var inactivityLimit: Int64
        /// The most siblings kept for one item.
        public var maximumSiblings: Int
        /// The most items one pull answer holds.
        public var maximumPageSize: Int
        /// The most items (tombstones included) the account may hold.
        public var maximumItems: Int
        /// The most bytes of stored blobs the account may hold.
        public var maximumBytes: Int
        /// The merge rule. Only tests switch to a broken one, to show the simulation catches it.
        package var mergeRule: MergeRule

        /// The defaults: 30 days of inactivity, ``ServerMerge/maximumSiblings``, pages of 500, no
        /// item or byte quota.
        public init(
            inactivityLimit: Int64 = 30 * 24 * 3600 * 1000,
            maximumSiblings: Int = ServerMerge.maximumSiblings,
            maximumPageSize: Int = 500,
            maximumItems: Int = .max,
            maximumBytes: Int = .max
        ) {
            self.inactivityLimit = inactivityLimit
            self.maximumSiblings = maximumSiblings
            self.maximumPageSize = maximumPageSize
            self.maximumItems = maximumItems
            self.maximumBytes = maximumBytes
            self.mergeRule = .versionVectors
        }
    }

    /// The merge rule; anything but the default is deliberately broken.
    package enum MergeRule: Sendable, Equatable {
        /// ``ServerMerge/merge(_:into:maximumSiblings:)``.
        case versionVectors
        /// Broken on purpose: the incoming version replaces everything stored, vectors ignored.
        case lastWriterWinsIgnoringVectors
    }

    /// One item's stored state.
    public struct StoredItem: Sendable, Equatable {
        /// The current siblings (all deleted: a tombstone).
        public var versions: [SealedVersion]
        /// The sequence number of the last change.
        public var sequence: UInt64

        /// Whether every sibling is a deletion.
        public var isTombstone: Bool { versions.allSatisfy(\.isDeleted) }
    }

    /// One zone's stored state.
    public struct Zone: Sendable, Equatable {
        /// The items the server knows, tombstones included.
        public var items: [ItemID: StoredItem] = [:]
        /// The tombstones collected from ``items``, kept as the authenticated evidence of a deletion
        /// that a device back past the horizon asks for (rule R10a); the latest per item, at most
        /// ``FeedRule/maximumCollectedDeletions`` (the oldest go first).
        public var collectedDeletions: [ItemID: StoredItem] = [:]
        /// The highest sequence number of a purged tombstone; cursors below it are expired.
        public var horizon: UInt64 = 0
        /// When (milliseconds) tombstones of the zone were last collected; nil: never.
        public var deletionsCollectedAt: Int64?
        /// When (milliseconds) the zone last dropped a collected deletion past
        /// ``FeedRule/maximumCollectedDeletions``: a deletion forgotten without evidence; nil: never.
        public var deletionsForgottenAt: Int64?
    }

    /// What the server remembers of a device.
    public struct Device: Sendable, Equatable {
        /// When the device was last heard from.
        public var lastSeen: Int64
        /// Per zone, the highest cursor the device acknowledged.
        public var acknowledged: [ZoneID: UInt64] = [:]
        /// Zones where tombstones the device had not acknowledged were purged while it was
        /// inactive: it must resync from 0 before anything else is served or accepted.
        public var mustResync: Set<ZoneID> = []
    }

    /// The tunables.
    public var configuration: Configuration
    /// The last sequence number given out.
    public internal(set) var sequence: UInt64 = 0
    /// The zones.
    public internal(set) var zones: [ZoneID: Zone] = [:]
    /// The enrolled devices.
    public internal(set) var devices: [DeviceID: Device] = [:]
    /// What the account holds, counted by every write and collection.
    public internal(set) var usage = BatchMerge.Usage()

    /// An empty account.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Enrols a device (or marks it seen). A device is also enrolled by its first request.
    public mutating func register(_ device: DeviceID, now: Int64) {
        if let known = devices[device] {
            devices[device]?.lastSeen = max(known.lastSeen, now)
        } else {
            devices[device] = Device(lastSeen: now)
        }
    }

    /// Revokes a device: it no longer holds tombstones back.
    public mutating func revoke(_ device: DeviceID) {
        devices[device] = nil
    }

    /// Merges a batch all or nothing with ``BatchMerge``.
    public mutating func push(_ batch: PushBatch<SealedVersion>, now: Int64) -> PushResponse {
        let answer = apply(
            BatchMerge.Batch(
                cursor: batch.cursor,
                items: batch.items.map { BatchMerge.Incoming(key: $0.item, version: $0.version) }),
            from: batch.device, zone: batch.zone, now: now)
        let status: PushResponse.Status = switch answer.status {
        case .committed: .committed
        case .cursorExpired: .cursorExpired
        case .tooManySiblings, .quotaExceeded: .refused
        }
        let reason: ItemRefusal? = switch answer.status {
        case .tooManySiblings: .tooManySiblings
        case .quotaExceeded: .quotaExceeded
        default: nil
        }
        return PushResponse(
            batchID: batch.batchID, status: status,
            results: answer.results.map { .init(item: $0.key, outcome: $0.outcome, sequence: $0.sequence) },
            refused: reason.flatMap { answer.refused.isEmpty ? nil : PushResponse.Refused(reason: $0, items: answer.refused) },
            latestSequence: status == .committed ? answer.latestSequence : nil)
    }

    /// Decides a batch with ``BatchMerge/decide(_:in:limits:merge:)`` over this account's state and
    /// stores what it says: the one rule every server storage keeps.
    public mutating func apply(
        _ batch: BatchMerge.Batch<ItemID, SealedVersion>, from device: DeviceID, zone zoneID: ZoneID, now: Int64
    ) -> BatchMerge.Answer<ItemID> {
        register(device, now: now)
        var zone = zones[zoneID] ?? Zone()
        var stored: [ItemID: [SealedVersion]] = [:]
        for item in batch.items {
            stored[item.key] = zone.items[item.key]?.versions
        }
        let set = BatchMerge.WorkingSet(
            latestSequence: sequence, usage: usage, horizon: zone.horizon,
            mustResync: devices[device]?.mustResync.contains(zoneID) == true, stored: stored)
        let limits = BatchMerge.Limits(
            maximumSiblings: configuration.maximumSiblings, maximumItems: configuration.maximumItems,
            maximumBytes: configuration.maximumBytes)
        let decision = BatchMerge.decide(batch, in: set, limits: limits) { merge($0, into: $1, maximumSiblings: $2) }
        switch decision {
        case .answer(let answer, let acknowledged):
            if acknowledged { acknowledge(device, zone: zoneID, cursor: batch.cursor, now: now) }
            return answer
        case .commit(let plan):
            acknowledge(device, zone: zoneID, cursor: batch.cursor, now: now)
            for (item, write) in plan.writes {
                zone.items[item] = StoredItem(versions: write.siblings, sequence: write.sequence)
            }
            zones[zoneID] = zone
            sequence = plan.latestSequence
            usage = plan.usage
            return plan.answer
        }
    }

    private func merge(
        _ incoming: SealedVersion, into stored: [SealedVersion], maximumSiblings: Int
    ) -> ServerMerge.Result<SealedVersion> {
        switch configuration.mergeRule {
        case .versionVectors:
            return ServerMerge.merge(incoming, into: stored, maximumSiblings: maximumSiblings)
        case .lastWriterWinsIgnoringVectors:
            if stored == [incoming] { return .init(outcome: .stale, siblings: stored, replaced: []) }
            return .init(outcome: .applied, siblings: [incoming], replaced: stored)
        }
    }
}

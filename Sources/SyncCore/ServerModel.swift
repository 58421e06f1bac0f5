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
        /// The merge rule. Only tests switch to a broken one, to show the simulation catches it.
        package var mergeRule: MergeRule

        /// The defaults: 30 days of inactivity, ``ServerMerge/maximumSiblings``, pages of 500.
        public init(
            inactivityLimit: Int64 = 30 * 24 * 3600 * 1000,
            maximumSiblings: Int = ServerMerge.maximumSiblings,
            maximumPageSize: Int = 500
        ) {
            self.inactivityLimit = inactivityLimit
            self.maximumSiblings = maximumSiblings
            self.maximumPageSize = maximumPageSize
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
        /// The highest sequence number of a purged tombstone; cursors below it are expired.
        public var horizon: UInt64 = 0
    }

    /// What the server remembers of a device.
    public struct Device: Sendable, Equatable {
        /// When the device was last heard from.
        public var lastSeen: Int64
        /// Per zone, the highest cursor the device acknowledged.
        public var acknowledged: [ZoneID: UInt64] = [:]
        /// Per zone, the device's last batch and the answer given, for retries.
        public var lastBatch: [ZoneID: PushResponse] = [:]
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

    /// Merges a batch all or nothing and remembers the answer for retries.
    public mutating func push(_ batch: PushBatch<SealedVersion>, now: Int64) -> PushResponse {
        register(batch.device, now: now)
        if let last = devices[batch.device]?.lastBatch[batch.zone] {
            if batch.batchID == last.batchID { return last }
            if batch.batchID < last.batchID {
                return PushResponse(batchID: batch.batchID, status: .superseded, results: [])
            }
        }
        var zone = zones[batch.zone] ?? Zone()
        if batch.cursor < zone.horizon || devices[batch.device]?.mustResync.contains(batch.zone) == true {
            let response = PushResponse(batchID: batch.batchID, status: .cursorExpired, results: [])
            devices[batch.device]?.lastBatch[batch.zone] = response
            return response
        }
        acknowledge(batch.device, zone: batch.zone, cursor: batch.cursor, now: now)
        var results: [PushResponse.ItemResult] = []
        var changed: [ItemID] = []
        for pushed in batch.items {
            let stored = zone.items[pushed.item]?.versions ?? []
            let merge = merge(pushed.version, into: stored)
            results.append(.init(item: pushed.item, outcome: merge.outcome))
            if merge.outcome == .applied || merge.outcome == .conflictKept {
                zone.items[pushed.item] = StoredItem(versions: merge.siblings, sequence: 0)
                changed.append(pushed.item)
            }
        }
        let refused = results.contains { $0.outcome == .tooManySiblings }
        let response = PushResponse(batchID: batch.batchID, status: refused ? .refused : .committed, results: results)
        if !refused {
            for item in changed {
                sequence += 1
                zone.items[item]?.sequence = sequence
            }
            zones[batch.zone] = zone
        }
        devices[batch.device]?.lastBatch[batch.zone] = response
        return response
    }

    private func merge(_ incoming: SealedVersion, into stored: [SealedVersion]) -> ServerMerge.Result<SealedVersion> {
        switch configuration.mergeRule {
        case .versionVectors:
            return ServerMerge.merge(incoming, into: stored, maximumSiblings: configuration.maximumSiblings)
        case .lastWriterWinsIgnoringVectors:
            if stored == [incoming] { return .init(outcome: .stale, siblings: stored, replaced: []) }
            return .init(outcome: .applied, siblings: [incoming], replaced: stored)
        }
    }
}

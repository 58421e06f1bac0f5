/// One item version in a push.
public struct PushedItem<Version: Hashable & Sendable>: Hashable, Sendable {
    /// The item.
    public var item: ItemID
    /// The version uploaded.
    public var version: Version

    /// Creates a pushed item.
    public init(item: ItemID, version: Version) {
        self.item = item
        self.version = version
    }
}

/// An atomic upload of versions of one zone: the server applies all of them or none.
///
/// A device numbers its batches per zone and has at most one unanswered batch; it retries that
/// batch unchanged until it gets an answer. The number is the device's own: it tells an answer
/// to this batch from one to an earlier batch, and is not sent. The server merges a retry again:
/// what the first send stored comes back `stale`, and a batch made below the zone's horizon
/// is refused (decision 0289).
public struct PushBatch<Version: Hashable & Sendable>: Hashable, Sendable {
    /// The uploading device.
    public var device: DeviceID
    /// The zone of every item in the batch.
    public var zone: ZoneID
    /// The batch's number, increasing per device and zone.
    public var batchID: UInt64
    /// The feed position the device had applied when it made these versions. Below the zone's
    /// horizon the device may not have seen a purged deletion, so the batch is refused.
    public var cursor: UInt64
    /// The versions, at most one per item.
    public var items: [PushedItem<Version>]

    /// Creates a batch.
    public init(device: DeviceID, zone: ZoneID, batchID: UInt64, cursor: UInt64, items: [PushedItem<Version>]) {
        self.device = device
        self.zone = zone
        self.batchID = batchID
        self.cursor = cursor
        self.items = items
    }

    /// The same batch with each version transformed, e.g. sealed for the server.
    public func map<Other>(_ transform: (Version) throws -> Other) rethrows -> PushBatch<Other> {
        PushBatch<Other>(
            device: device, zone: zone, batchID: batchID, cursor: cursor,
            items: try items.map { PushedItem(item: $0.item, version: try transform($0.version)) }
        )
    }
}

/// The server's answer to a ``PushBatch``.
public struct PushResponse: Hashable, Sendable, Codable {
    /// What became of the batch as a whole.
    public enum Status: String, Hashable, Sendable, Codable {
        /// Every item was merged and the batch is durable.
        case committed
        /// Nothing was stored: the batch was refused (a sibling bound or quota; ``refused`` names
        /// the items when the refusal is about them).
        case refused
        /// Nothing was stored: the batch's cursor is below the zone's horizon. The device must
        /// resync in full before pushing again.
        case cursorExpired
        /// Nothing was stored: the request was larger than the server takes, and it named no
        /// item (its body or item-count limit, decision 0224).
        case tooLarge
    }

    /// One item's outcome.
    public struct ItemResult: Hashable, Sendable, Codable {
        /// The item.
        public var item: ItemID
        /// What the merge did (or would have done, in a refused batch).
        public var outcome: ServerMerge.Outcome
        /// The sequence number the server gave the write; nil when it stored nothing (stale) or
        /// did not say.
        public var sequence: UInt64?

        /// Creates an item result.
        public init(item: ItemID, outcome: ServerMerge.Outcome, sequence: UInt64? = nil) {
            self.item = item
            self.outcome = outcome
            self.sequence = sequence
        }
    }

    /// The batch answered.
    public var batchID: UInt64
    /// What became of the batch.
    public var status: Status
    /// Per item, in the batch's order (empty when the cursor expired).
    public var results: [ItemResult]
    /// When the batch was refused because of some of its items: why, and which. Without them the
    /// rest of the batch can be pushed again under a new number.
    public var refused: Refused?
    /// The account's latest sequence number after a committed batch; nil when the server did not
    /// say (a refusal). An honest server never answers a later request from an older state, so
    /// a page whose feed ends below it is an old answer (decision 0188).
    public var latestSequence: UInt64?

    /// The items a refused batch names, and why.
    public struct Refused: Hashable, Sendable, Codable {
        /// Why they were refused.
        public var reason: ItemRefusal
        /// The items.
        public var items: [ItemID]

        /// Creates a refusal.
        public init(reason: ItemRefusal, items: [ItemID]) {
            self.reason = reason
            self.items = items
        }
    }

    /// The items of `batch` this answer refuses, to be set aside: those it names, or the one
    /// version of a batch of one refused as too large (decision 0224).
    public func refusedItems<Version>(of batch: PushBatch<Version>) -> [ItemID] {
        if let refused { return batch.items.map(\.item).filter(refused.items.contains) }
        if status == .tooLarge, batch.items.count == 1 { return batch.items.map(\.item) }
        return []
    }

    /// Why ``refusedItems(of:)`` are refused.
    public var refusalReason: ItemRefusal? { refused?.reason ?? (status == .tooLarge ? .tooLarge : nil) }

    /// Creates a response.
    public init(batchID: UInt64, status: Status, results: [ItemResult], refused: Refused? = nil, latestSequence: UInt64? = nil) {
        self.batchID = batchID
        self.status = status
        self.results = results
        self.refused = refused
        self.latestSequence = latestSequence
    }
}

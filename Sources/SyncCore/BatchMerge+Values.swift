/// A version the server stores: it has a vector and takes room in its account's byte quota.
public protocol StorableVersion: Versioned {
    /// The bytes it counts for in the account's quota: the length of its sealed blob.
    var byteCount: Int { get }
}

extension SealedVersion: StorableVersion {
    /// The payload's length.
    public var byteCount: Int { payload.count }
}

extension BatchMerge {
    /// The bounds a batch is checked against.
    public struct Limits: Sendable, Equatable {
        /// The default byte quota of an account: 100 MiB of stored blobs (decision 0101).
        public static let defaultMaximumBytes = 100 << 20

        /// The most concurrent versions of one item.
        public var maximumSiblings: Int
        /// The most items (tombstones included) the account may hold across its zones.
        public var maximumItems: Int
        /// The most bytes of stored blobs (every sibling, tombstones included) the account may hold.
        public var maximumBytes: Int

        /// Creates limits; by default only the sibling bound applies.
        public init(maximumSiblings: Int = ServerMerge.maximumSiblings, maximumItems: Int = .max, maximumBytes: Int = .max) {
            self.maximumSiblings = maximumSiblings
            self.maximumItems = maximumItems
            self.maximumBytes = maximumBytes
        }
    }

    /// What an account holds, counted incrementally by every write and collection.
    public struct Usage: Sendable, Hashable, Codable {
        /// Items, tombstones included.
        public var items: Int
        /// Bytes of stored blobs, over every sibling.
        public var bytes: Int

        /// Creates a usage.
        public init(items: Int = 0, bytes: Int = 0) {
            self.items = items
            self.bytes = bytes
        }
    }

    /// One incoming version of a batch.
    public struct Incoming<Key: Hashable, Version> {
        /// The item.
        public var key: Key
        /// The version uploaded.
        public var version: Version

        /// Creates an incoming version.
        public init(key: Key, version: Version) {
            self.key = key
            self.version = version
        }
    }

    /// A batch as the rule sees it.
    public struct Batch<Key: Hashable, Version> {
        /// The feed position the device had applied when it made the versions.
        public var cursor: UInt64
        /// The versions, merged in order.
        public var items: [Incoming<Key, Version>]

        /// Creates a batch.
        public init(cursor: UInt64, items: [Incoming<Key, Version>]) {
            self.cursor = cursor
            self.items = items
        }
    }

    /// What the storage reads, in the batch's transaction, before the rule decides: the account's
    /// counters, the zone's horizon, the device's state in the zone, and the current versions of
    /// the batch's items.
    public struct WorkingSet<Key: Hashable & Sendable, Version> {
        /// The account's last sequence number.
        public var latestSequence: UInt64
        /// What the account holds.
        public var usage: Usage
        /// The zone's horizon: the highest sequence of a collected tombstone.
        public var horizon: UInt64
        /// Whether the device must resync the zone from 0 before anything is accepted.
        public var mustResync: Bool
        /// The current versions of the batch's items; an item absent here is new to the server.
        public var stored: [Key: [Version]]

        /// Creates a working set.
        public init(
            latestSequence: UInt64, usage: Usage, horizon: UInt64, mustResync: Bool, stored: [Key: [Version]]
        ) {
            self.latestSequence = latestSequence
            self.usage = usage
            self.horizon = horizon
            self.mustResync = mustResync
            self.stored = stored
        }
    }

    /// The answer to a batch.
    public struct Answer<Key: Hashable & Sendable>: Hashable, Sendable {
        /// What became of the batch.
        public enum Status: String, Hashable, Sendable {
            /// Every item was merged and the batch is durable.
            case committed
            /// The batch's cursor is below the zone's horizon, or the device must resync first.
            case cursorExpired
            /// Nothing was stored: the listed items would exceed the sibling bound.
            case tooManySiblings
            /// Nothing was stored: the listed items would take the account past its quota.
            case quotaExceeded
        }

        /// One item's outcome.
        public struct ItemResult: Hashable, Sendable {
            /// The item.
            public var key: Key
            /// What the merge did (or would have done, in a refused batch).
            public var outcome: ServerMerge.Outcome
            /// The write's sequence number; nil when stale or when the batch was not committed.
            public var sequence: UInt64?

            /// Creates a result.
            public init(key: Key, outcome: ServerMerge.Outcome, sequence: UInt64?) {
                self.key = key
                self.outcome = outcome
                self.sequence = sequence
            }
        }

        /// What became of the batch.
        public var status: Status
        /// Per item, in the batch's order (empty when expired).
        public var results: [ItemResult]
        /// The items that caused a refusal, in the batch's order (empty unless refused).
        public var refused: [Key]
        /// The account's latest sequence number after the batch.
        public var latestSequence: UInt64

        /// Creates an answer.
        public init(status: Status, results: [ItemResult] = [], refused: [Key] = [], latestSequence: UInt64) {
            self.status = status
            self.results = results
            self.refused = refused
            self.latestSequence = latestSequence
        }
    }

    /// One item's new state.
    public struct Write<Version> {
        /// Its siblings after the batch (never empty).
        public var siblings: [Version]
        /// The sequence number of its last write in the batch.
        public var sequence: UInt64
        /// Whether the server did not hold the item before.
        public var isNew: Bool

        @usableFromInline
        init(siblings: [Version], sequence: UInt64, isNew: Bool) {
            self.siblings = siblings
            self.sequence = sequence
            self.isNew = isNew
        }
    }

    /// What a committed batch writes: the items, the account's counters and the answer.
    public struct Plan<Key: Hashable & Sendable, Version> {
        /// The changed items' new states.
        public var writes: [Key: Write<Version>]
        /// The changed items in the order of their first write in the batch.
        public var order: [Key]
        /// The account's last sequence number after the batch.
        public var latestSequence: UInt64
        /// What the account holds after the batch.
        public var usage: Usage
        /// The answer to give.
        public var answer: Answer<Key>

        @usableFromInline
        init(writes: [Key: Write<Version>], order: [Key], latestSequence: UInt64, usage: Usage, answer: Answer<Key>) {
            self.writes = writes
            self.order = order
            self.latestSequence = latestSequence
            self.usage = usage
            self.answer = answer
        }
    }

    /// What the storage does with a batch.
    public enum Decision<Key: Hashable & Sendable, Version> {
        /// Write the plan, acknowledge the cursor.
        case commit(Plan<Key, Version>)
        /// Write nothing of the batch; give `answer`. When `acknowledge` is set, record the batch's
        /// cursor as acknowledged.
        case answer(Answer<Key>, acknowledge: Bool)

        /// The answer given.
        public var answer: Answer<Key> {
            switch self {
            case .commit(let plan): plan.answer
            case .answer(let answer, _): answer
            }
        }
    }
}

extension BatchMerge.Incoming: Sendable where Key: Sendable, Version: Sendable {}
extension BatchMerge.Incoming: Equatable where Key: Equatable, Version: Equatable {}
extension BatchMerge.Batch: Sendable where Key: Sendable, Version: Sendable {}
extension BatchMerge.Batch: Equatable where Key: Equatable, Version: Equatable {}

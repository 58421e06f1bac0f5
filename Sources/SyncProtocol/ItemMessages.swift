import SyncCore

/// One version of an item on the wire: the sealed blob, its vector and deleted flag.
public struct WireVersion: Hashable, Sendable, Codable {
    /// The version vector.
    public var vector: VersionVector
    /// Whether this version is a tombstone.
    public var deleted: Bool
    /// The sealed blob (opaque to the server).
    public var blob: Base64Bytes

    /// Creates a version.
    public init(vector: VersionVector, deleted: Bool, blob: Base64Bytes) {
        self.vector = vector
        self.deleted = deleted
        self.blob = blob
    }
}

/// One item of an upload batch.
public struct UploadItem: Hashable, Sendable, Codable {
    /// The opaque item ID (1...128 bytes of `[A-Za-z0-9_=+/.-]`).
    public var id: ItemID
    /// The vector of this version.
    public var vector: VersionVector
    /// Whether this version is a tombstone.
    public var deleted: Bool
    /// The sealed blob.
    public var blob: Base64Bytes

    /// Creates an item.
    public init(id: ItemID, vector: VersionVector, deleted: Bool, blob: Base64Bytes) {
        self.id = id
        self.vector = vector
        self.deleted = deleted
        self.blob = blob
    }
}

/// `POST /v1/zones/{zone}/items`: an atomic batch upload.
public struct UploadRequest: Hashable, Sendable, Codable {
    /// The feed position the device had applied when it made these versions; it is also
    /// acknowledged. Below the zone's horizon the batch is refused with `410 cursor_expired`. A
    /// batch sent again is merged again: what the first send stored comes back `stale`.
    public var cursor: UInt64
    /// The items, merged in order.
    public var items: [UploadItem]

    /// Creates a request.
    public init(cursor: UInt64, items: [UploadItem]) {
        self.cursor = cursor
        self.items = items
    }
}

/// The answer to ``UploadRequest``: one result per item, in order.
public struct UploadResponse: Hashable, Sendable, Codable {
    /// What happened to one item.
    public struct Result: Hashable, Sendable, Codable {
        /// The item ID.
        public var id: ItemID
        /// `applied`, `stale` or `conflictKept`.
        public var outcome: ServerMerge.Outcome
        /// The write's sequence number; absent when stale.
        public var sequence: UInt64?

        /// Creates a result.
        public init(id: ItemID, outcome: ServerMerge.Outcome, sequence: UInt64?) {
            self.id = id
            self.outcome = outcome
            self.sequence = sequence
        }
    }

    /// The results, in the batch's order.
    public var results: [Result]
    /// The account's latest sequence number after the batch.
    public var latestSequence: UInt64

    /// Creates a response.
    public init(results: [Result], latestSequence: UInt64) {
        self.results = results
        self.latestSequence = latestSequence
    }
}

/// An item's current versions in the change feed.
public struct FeedItem: Hashable, Sendable, Codable {
    /// The item ID.
    public var id: ItemID
    /// The sequence number of its latest change.
    public var sequence: UInt64
    /// Its current versions: several are concurrent siblings; one deleted version is a tombstone.
    public var versions: [WireVersion]

    /// Creates an entry.
    public init(id: ItemID, sequence: UInt64, versions: [WireVersion]) {
        self.id = id
        self.sequence = sequence
        self.versions = versions
    }
}

/// The answer to `GET /v1/zones/{zone}/changes?after=N&limit=M[&resync=true][&collected=true]`. A
/// cursor that can no longer be served gets `410` with code `cursor_expired` instead.
public struct ChangesResponse: Hashable, Sendable, Codable {
    /// The question answered, as asked: the cursor after which changes are listed, and whether the
    /// page belongs to a full resync and lists collected deletions. They say what `cursor` and
    /// `deletionsCollectedAt` mean, so a device takes a page only for the question it asked
    /// (an answer handed to a later request is never read as another question's).
    public var after: UInt64
    public var resync: Bool
    public var collected: Bool
    /// Items changed after the cursor, oldest change first.
    public var items: [FeedItem]
    /// The cursor for the next request.
    public var cursor: UInt64
    /// Whether more changes follow.
    public var hasMore: Bool
    /// When the server last collected the zone's tombstones (milliseconds since 1970, its clock);
    /// on a page that lists collected deletions, when it last forgot one without keeping it.
    /// Absent when it never did (decision 0175).
    public var deletionsCollectedAt: Int64?

    /// Creates a response.
    public init(
        after: UInt64, resync: Bool = false, collected: Bool = false, items: [FeedItem], cursor: UInt64, hasMore: Bool,
        deletionsCollectedAt: Int64? = nil
    ) {
        self.after = after
        self.resync = resync
        self.collected = collected
        self.items = items
        self.cursor = cursor
        self.hasMore = hasMore
        self.deletionsCollectedAt = deletionsCollectedAt
    }
}

/// `POST /v1/zones/{zone}/acknowledge`: the device has applied every change up to `cursor`.
/// (Asking for changes after a cursor, or uploading at one, acknowledges it too.)
public struct AcknowledgeRequest: Hashable, Sendable, Codable {
    /// The cursor of the last page applied.
    public var cursor: UInt64

    /// Creates a request.
    public init(cursor: UInt64) { self.cursor = cursor }
}

/// Identifies one request of a device, so that a late or duplicated answer to an earlier request
/// (possibly from before a restart) is recognised and ignored. `epoch` grows at every restart.
public struct RequestID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The device's restart count.
    public var epoch: UInt64
    /// The request's number within the epoch.
    public var number: UInt64

    /// Creates a request ID.
    public init(epoch: UInt64, number: UInt64) {
        self.epoch = epoch
        self.number = number
    }

    public static func < (lhs: RequestID, rhs: RequestID) -> Bool {
        (lhs.epoch, lhs.number) < (rhs.epoch, rhs.number)
    }

    public var description: String { "\(epoch).\(number)" }

    /// The ID an answer gets that answers no request this device made: a page that names another
    /// question than the one asked (``PullRequest/idOfPage(after:resync:collected:)``). No request
    /// has it, so the machine ignores the answer and the driver asks again.
    public static let unasked = RequestID(epoch: .max, number: .max)
}

/// "Changes since cursor": one page of a zone's change feed.
///
/// Asking for changes after `cursor` also acknowledges that the device has durably applied
/// everything up to `cursor`; the server's tombstone collection relies on it.
public struct PullRequest: Hashable, Sendable, Codable {
    /// The request, echoed in the answer.
    public var requestID: RequestID
    /// The asking device.
    public var device: DeviceID
    /// The zone.
    public var zone: ZoneID
    /// The sequence number after which changes are wanted (0: from the start).
    public var cursor: UInt64
    /// A full resync: the cursor is a position in the snapshot, not checked against the horizon;
    /// the device reconciles what the resync's pages do not mention.
    public var isFullResync: Bool
    /// The most items in the answer.
    public var limit: Int
    /// With ``isFullResync``: list also the deletions the server collected, for items it no longer
    /// holds otherwise: a device back past the horizon removes an unchanged copy only on such an
    /// authenticated tombstone (rule R10a of docs/sync-rules.md). A device with nothing to reconcile
    /// does not ask.
    public var includesCollectedDeletions: Bool
    /// The account's latest sequence this device was told (its state's `latestSequence`: by a
    /// push's answer or a last page), named by an incremental pull when its cursor lags behind
    /// it; 0 otherwise: a server restored from a backup that ended below it lost what the device
    /// saw (R9).
    public var told: UInt64 = 0

    /// Creates a pull request.
    public init(
        requestID: RequestID, device: DeviceID, zone: ZoneID, cursor: UInt64, isFullResync: Bool, limit: Int,
        includesCollectedDeletions: Bool = false
    ) {
        self.requestID = requestID
        self.device = device
        self.zone = zone
        self.cursor = cursor
        self.isFullResync = isFullResync
        self.limit = limit
        self.includesCollectedDeletions = includesCollectedDeletions
    }

    /// The request a page answers that names the question it answers (its `after`, `resync` and
    /// `collected`, which say what its cursor and collection time mean): this one when it asks the
    /// same, else ``RequestID/unasked`` (R22 of docs/sync-rules.md). An answer held back and handed
    /// to a later call (a replaying proxy, a desynchronised connection) is so never read as the
    /// answer to another question: an incremental page taken for a resync's page claims the
    /// server lists nothing and reads its collection time as a forgotten deletion's.
    public func idOfPage(after: UInt64, resync: Bool, collected: Bool) -> RequestID {
        after == cursor && resync == isFullResync && collected == includesCollectedDeletions ? requestID : .unasked
    }
}

/// One changed item in the feed: its whole current state, not the history of changes.
public struct ChangedItem<Version: Hashable & Sendable>: Hashable, Sendable {
    /// The item.
    public var item: ItemID
    /// The sequence number of the item's last change.
    public var sequence: UInt64
    /// Its current siblings; all deleted when the item is a tombstone. Never empty in a server's
    /// answer; a driver that holds an item back (decision 0137) hands the machine the item with
    /// none, which only counts it as mentioned.
    public var versions: [Version]

    /// Creates a changed item.
    public init(item: ItemID, sequence: UInt64, versions: [Version]) {
        self.item = item
        self.sequence = sequence
        self.versions = versions
    }
}

/// The server's answer to a ``PullRequest``.
public enum PullResponse<Version: Hashable & Sendable>: Hashable, Sendable {
    /// A page of changes in sequence order. `nextCursor` is where the next page starts; when
    /// `hasMore` is false the device is in step with the server as of `nextCursor`.
    /// `deletionsCollectedAt` is the server's time (milliseconds) of its latest collection of the
    /// zone's tombstones, nil when it never collected any (decision 0175).
    case changes(requestID: RequestID, items: [ChangedItem<Version>], nextCursor: UInt64, hasMore: Bool, deletionsCollectedAt: Int64? = nil)
    /// The cursor is older than the zone's horizon: tombstones after it were purged, so the
    /// device must resync in full.
    case cursorExpired(requestID: RequestID)
    /// The server was restored from a backup older than the cursor: it lost changes the device
    /// has seen. The device resyncs in full and gives back what the server no longer lists
    /// (decision 0154).
    case feedRestored(requestID: RequestID)

    /// The request answered.
    public var requestID: RequestID {
        switch self {
        case .changes(let requestID, _, _, _, _), .cursorExpired(let requestID), .feedRestored(let requestID): requestID
        }
    }

    /// Whether the answer is a page that lists no item.
    public var isEmptyPage: Bool {
        if case .changes(_, let items, _, _, _) = self { items.isEmpty } else { false }
    }

    /// An answer without versions (expired or restored) retyped for other versions; nil for a page.
    public func versionless<Other>(as _: Other.Type = Other.self) -> PullResponse<Other>? {
        switch self {
        case .changes: nil
        case .cursorExpired(let requestID): .cursorExpired(requestID: requestID)
        case .feedRestored(let requestID): .feedRestored(requestID: requestID)
        }
    }

    /// The same answer with each version transformed, e.g. opened by the device.
    public func map<Other>(_ transform: (Version) throws -> Other) rethrows -> PullResponse<Other> {
        switch self {
        case .cursorExpired(let requestID):
            return .cursorExpired(requestID: requestID)
        case .feedRestored(let requestID):
            return .feedRestored(requestID: requestID)
        case .changes(let requestID, let items, let nextCursor, let hasMore, let collectedAt):
            let mapped = try items.map {
                ChangedItem(item: $0.item, sequence: $0.sequence, versions: try $0.versions.map(transform))
            }
            return .changes(requestID: requestID, items: mapped, nextCursor: nextCursor, hasMore: hasMore, deletionsCollectedAt: collectedAt)
        }
    }
}

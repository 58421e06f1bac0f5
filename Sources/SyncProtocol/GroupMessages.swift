// `GET /v1/groups/{group}/log?from=N` answers a page of entries as the device log does
// (`DeviceLogResponse`).

/// `PUT /v1/groups/{group}/log`: appends an entry to a shared group's membership log (decision
/// 0283). The entry is opaque to the server: signed by a member's account identity, verified by
/// every member's devices. `members` is the group's member accounts after the entry, as the
/// appending device read them in the log it verified; the server uses it only to decide whose
/// devices it serves the group to (a courtesy: devices trust the log, not the server).
public struct GroupLogAppendRequest: Hashable, Sendable, Codable {
    /// The position the entry takes: the log's length as the device last read it (0 creates the group).
    public var index: Int
    /// The entry's bytes.
    public var entry: Base64Bytes
    /// The member accounts' names after the entry.
    public var members: [String]
    /// Those of `members` that only read (viewers), whose writes the server refuses as a courtesy
    /// (decision 0290); absent: none.
    public var viewers: [String]?

    /// Creates a request.
    public init(index: Int, entry: Base64Bytes, members: [String], viewers: [String]? = nil) {
        self.index = index
        self.entry = entry
        self.members = members
        self.viewers = viewers
    }
}

/// One group the caller's account is a member of, as `GET /v1/groups` lists it.
public struct GroupSummaryMessage: Hashable, Sendable, Codable {
    /// The group's ID: 16 bytes as 32 lowercase hexadecimal digits.
    public var group: String
    /// How many entries its log holds.
    public var entries: Int

    /// Creates a summary.
    public init(group: String, entries: Int) {
        self.group = group
        self.entries = entries
    }
}

/// The answer to `GET /v1/groups`: the groups the caller's account is a current member of, by ID.
public struct GroupListResponse: Hashable, Sendable, Codable {
    /// The groups.
    public var groups: [GroupSummaryMessage]

    /// Creates a response.
    public init(groups: [GroupSummaryMessage]) { self.groups = groups }
}

/// What the server promises about a group's membership log, which clients hold it to.
public enum GroupLogBounds {
    /// The largest entry: a `remove` or `rekey` seals the key to every member (about 1,140 bytes a
    /// member with an X-Wing wrap), carries a signature, and a `remove` the digests it vouches for.
    public static let maximumEntryBytes = 64 * 1024
    /// The most entries one group's log holds.
    public static let maximumEntries = 10_000
    /// The most entries one `GET /v1/groups/{group}/log` returns.
    public static let maximumPage = 200
}

import KeychainModel

/// The versions a sync apply leaves its items at, recorded by
/// ``Keychain/applyRemote(_:basedOnJournal:versions:)`` in the apply's own transaction.
///
/// The sync state lives in another file and is committed after the keychain; a crash in between
/// leaves the keychain a version ahead of it. A local change read from the journal afterwards is
/// built over the version recorded here, so it is not taken for a write concurrent with the
/// version the user saw and changed (decision 0107).
public struct RemoteVersionTags: Sendable, Hashable {
    /// Who recorded them (the sync state's device): a tag of an earlier enrolment is not used.
    public var owner: String
    /// The opaque version (the sync engine's encoded version vector) of each written item.
    public var tags: [PrimaryKey: [UInt8]]
    /// The versions the server took from this device: recorded as the item's value only when it
    /// was not written locally after the apply's journal position (decision 0175).
    public var pushed: [PrimaryKey: [UInt8]]
    /// What items written locally since were written over (a version the server took from this
    /// device, and all the device had seen of the item): recorded as changed locally, so a copy
    /// taken again without sync state is based on it (decision 0234).
    public var replaced: [PrimaryKey: [UInt8]]
    /// Of the items in `tags` and `sent`, the server's versions the stored value was decided from
    /// (the join of their encoded vectors; a tag is all the device had seen, its own unpushed
    /// writes included). A pushed version is its own. A device whose state is behind the
    /// keychain, or lost, refuses a listing older than it (0243, rule R54).
    public var serverVersions: [PrimaryKey: [UInt8]]
    /// The versions pushed from here whose answer has not come, about to be sent: each one's tag
    /// (its vector) and the whole version as the sync engine encodes it, opaque here. Recorded as
    /// the item's value only when it was not written locally after the apply's journal position;
    /// a device back without its sync state pushes it again as that version (decision 0247).
    public var sent: [PrimaryKey: Sent]
    /// Of the versions in `pushed`, the whole version as the sync engine encodes it: kept as the
    /// item's sent version, so a device back without its sync state takes its own acknowledged
    /// value again as that version, which a server that lost it gets back (decision 0253).
    public var pushedVersions: [PrimaryKey: [UInt8]]

    /// A version about to be pushed (see ``RemoteVersionTags/sent``).
    public struct Sent: Sendable, Hashable {
        /// The version's vector, the item's tag from now on.
        public var tag: [UInt8]
        /// The version as the sync engine encodes it.
        public var version: [UInt8]

        public init(tag: [UInt8], version: [UInt8]) {
            self.tag = tag
            self.version = version
        }
    }

    /// Creates the tags of one apply.
    public init(
        owner: String, tags: [PrimaryKey: [UInt8]], pushed: [PrimaryKey: [UInt8]] = [:], replaced: [PrimaryKey: [UInt8]] = [:],
        serverVersions: [PrimaryKey: [UInt8]] = [:], sent: [PrimaryKey: Sent] = [:], pushedVersions: [PrimaryKey: [UInt8]] = [:]
    ) {
        self.owner = owner
        self.tags = tags
        self.pushed = pushed
        self.replaced = replaced
        self.serverVersions = serverVersions
        self.sent = sent
        self.pushedVersions = pushedVersions
    }
}

/// What the keychain recorded of an item not written locally since (see
/// ``Keychain/unchangedRemoteVersions()``).
public struct UnchangedRemoteVersion: Sendable, Hashable {
    /// All the device had seen of the item at the apply (decision 0175).
    public var tag: [UInt8]
    /// The server's versions the value was decided from, when known (see
    /// ``RemoteVersionTags/serverVersions``).
    public var serverVersion: [UInt8]?
    /// The version pushed from here whose answer never came, as the sync engine encodes it (0247).
    public var sentVersion: [UInt8]?

    public init(tag: [UInt8], serverVersion: [UInt8]?, sentVersion: [UInt8]?) {
        self.tag = tag
        self.serverVersion = serverVersion
        self.sentVersion = sentVersion
    }
}

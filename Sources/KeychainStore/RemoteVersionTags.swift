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
    /// Of the items in `tags`, those whose value is exactly a version the server holds: that
    /// version (its own encoded vector; a tag is all the device had seen). A pushed version is
    /// one too. A device back without its sync state refuses a listing older than it (0243).
    public var serverVersions: [PrimaryKey: [UInt8]]

    /// Creates the tags of one apply.
    public init(
        owner: String, tags: [PrimaryKey: [UInt8]], pushed: [PrimaryKey: [UInt8]] = [:], replaced: [PrimaryKey: [UInt8]] = [:],
        serverVersions: [PrimaryKey: [UInt8]] = [:]
    ) {
        self.owner = owner
        self.tags = tags
        self.pushed = pushed
        self.replaced = replaced
        self.serverVersions = serverVersions
    }
}

/// A change from the local keychain's journal, as the sync machine receives it.
public struct LocalChange: Hashable, Sendable {
    /// Which items may leave the device.
    public enum Scope: Hashable, Sendable {
        /// A synchronizable item: it follows the account.
        case synchronizable
        /// A local item (not synchronizable).
        case local
        /// An item with a `ThisDeviceOnly` accessibility class.
        case thisDeviceOnly

        /// Whether items of this scope are synced. Only ``synchronizable`` ones are.
        public var leavesDevice: Bool { self == .synchronizable }
    }

    /// The item.
    public var item: ItemID
    /// The item's scope.
    public var scope: Scope
    /// The new content, or `nil` for a deletion.
    public var content: [UInt8]?
    /// When the change was made, milliseconds since 1970 on this device's clock.
    public var modifiedAt: Int64
    /// The version the local store held when the change was made, as far as the store recorded
    /// it: a pulled version it took before a crash kept the sync state from learning it. The new
    /// version is written over it as well as over the state's (decision 0107).
    public var basedOn: VersionVector
    /// For a device without sync state: the version an earlier enrolment of this store pushed,
    /// whose answer never came, and whose value the store still holds (its content aside). The
    /// change is that version, not a new write (decision 0247).
    public var sentBefore: ItemVersion?

    /// Creates a local change.
    public init(
        item: ItemID, scope: Scope, content: [UInt8]?, modifiedAt: Int64, basedOn: VersionVector = VersionVector(),
        sentBefore: ItemVersion? = nil
    ) {
        self.item = item
        self.scope = scope
        self.content = content
        self.modifiedAt = modifiedAt
        self.basedOn = basedOn
        self.sentBefore = sentBefore
    }
}

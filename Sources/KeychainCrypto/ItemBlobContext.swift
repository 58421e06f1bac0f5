import SyncCore

/// Everything an item blob is bound to (its AES-GCM associated data): a blob opens only with the
/// exact account, zone, item ID, key epoch, version vector and deleted flag it was sealed with.
///
/// The associated data is encoded when the context is made or changed, not on every seal or open.
public struct ItemBlobContext: Sendable, Equatable {
    /// The account's identifier (its name on the server).
    public var account: String { didSet { encode() } }
    /// The zone: the keychain's, or `kv.<store>` for a key-value store.
    public var zone: String { didSet { encode() } }
    /// The item's opaque ID.
    public var itemID: ItemID { didSet { encode() } }
    /// The epoch of the account key that seals the blob.
    public var keyEpoch: UInt32 { didSet { encode() } }
    /// The version's vector.
    public var versionVector: VersionVector { didSet { encode() } }
    /// Whether this version is a tombstone.
    public var isDeleted: Bool { didSet { encode() } }

    /// The encoded associated data (layout below).
    package private(set) var associatedData: [UInt8] = []

    /// Creates a context.
    public init(account: String, zone: String, itemID: ItemID, keyEpoch: UInt32, versionVector: VersionVector, isDeleted: Bool) {
        self.account = account
        self.zone = zone
        self.itemID = itemID
        self.keyEpoch = keyEpoch
        self.versionVector = versionVector
        self.isDeleted = isDeleted
        encode()
    }

    /// Whether both contexts bind the same values.
    public static func == (lhs: ItemBlobContext, rhs: ItemBlobContext) -> Bool {
        lhs.associatedData == rhs.associatedData
    }

    /// `version (1) ‖ len(account) ‖ account ‖ len(zone) ‖ zone ‖ len(itemID) ‖ itemID ‖ keyEpoch (4) ‖
    /// len(vector) ‖ VersionVector.canonicalEncoding ‖ deleted (1: 0x00 or 0x01)`; lengths and
    /// integers 4-byte big-endian, text UTF-8.
    private mutating func encode() {
        let vector = versionVector.canonicalEncoding
        var bytes: [UInt8] = []
        bytes.reserveCapacity(1 + 4 + account.utf8.count + 4 + zone.utf8.count + 4 + itemID.rawValue.utf8.count + 4 + 4 + vector.count + 1)
        bytes.append(ItemBlobFormat.version)
        bytes.appendLengthPrefixed(account.utf8)
        bytes.appendLengthPrefixed(zone.utf8)
        bytes.appendLengthPrefixed(itemID.rawValue.utf8)
        bytes.appendBigEndian(keyEpoch)
        bytes.appendLengthPrefixed(vector)
        bytes.append(isDeleted ? 1 : 0)
        associatedData = bytes
    }
}

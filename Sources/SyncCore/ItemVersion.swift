/// One version of an item as a device sees it after opening the sealed blob: what conflict
/// resolution needs and an opaque content value for the local keychain.
public struct ItemVersion: Versioned, Hashable, Sendable, Codable {
    /// The history this version has seen, including itself.
    public var vector: VersionVector
    /// Whether this version is a tombstone (its content is then empty).
    public var isDeleted: Bool
    /// When the writing device made the change, milliseconds since 1970 on its clock.
    public var modifiedAt: Int64
    /// The device that made the change. A resolution keeps the winner's writer and time.
    public var device: DeviceID
    /// The item's attributes and secret, opaque to sync.
    public var content: [UInt8]
    /// The vector of the user's write that made this value. A resolution copies the winner's value
    /// and origin under a new vector; a version whose value another version has already seen
    /// (that one's vector descends from this origin) is superseded by it.
    public var origin: VersionVector
    /// What the user writes in this version's history had seen when they were made (the join of
    /// their vectors before the writer's increment): every value whose origin this descends from
    /// was overwritten or deleted by a user, even if that write later lost a conflict.
    public var overwritten: VersionVector

    /// Creates a version. For a user's write, `origin` is `vector` (the default) and
    /// `overwritten` is what the device had seen of the item before writing.
    public init(
        vector: VersionVector, isDeleted: Bool, modifiedAt: Int64, device: DeviceID, content: [UInt8],
        origin: VersionVector? = nil, overwritten: VersionVector = VersionVector()
    ) {
        self.vector = vector
        self.isDeleted = isDeleted
        self.modifiedAt = modifiedAt
        self.device = device
        self.content = isDeleted ? [] : content
        self.origin = origin ?? vector
        self.overwritten = overwritten
    }

    /// Whether two versions carry the same value (the same user write: deleted flag, time,
    /// writer, content and origin), whatever their vectors. Resolutions of the same siblings made
    /// on different devices carry the same value.
    public func sameValue(as other: ItemVersion) -> Bool {
        isDeleted == other.isDeleted && modifiedAt == other.modifiedAt && device == other.device
            && content == other.content && origin == other.origin
    }

    /// The receiver with another vector.
    public func with(vector: VersionVector) -> ItemVersion {
        var copy = self
        copy.vector = vector
        return copy
    }
}

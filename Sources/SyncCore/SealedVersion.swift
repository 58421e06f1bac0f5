/// One version of an item as the server sees it: the version vector, the deleted flag and an
/// opaque payload (in the product an AES-GCM blob whose associated data binds the vector and the
/// flag). The server reads only the vector, the flag and the payload's size.
public struct SealedVersion: Versioned, Hashable, Sendable, Codable {
    /// The history this version has seen, including itself.
    public var vector: VersionVector
    /// Whether this version is a tombstone.
    public var isDeleted: Bool
    /// The sealed bytes, never interpreted by the server.
    public var payload: [UInt8]

    /// Creates a sealed version.
    public init(vector: VersionVector, isDeleted: Bool, payload: [UInt8]) {
        self.vector = vector
        self.isDeleted = isDeleted
        self.payload = payload
    }
}

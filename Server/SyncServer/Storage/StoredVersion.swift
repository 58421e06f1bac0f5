import SyncCore

/// One version of an item as the server keeps it: an opaque sealed blob with its version vector and
/// deleted flag (a tombstone is a sealed blob too). The server reads only the vector.
package struct StoredVersion: Versioned, Sendable, Equatable {
    package var vector: VersionVector
    package var deleted: Bool
    package var blob: [UInt8]

    package init(vector: VersionVector, deleted: Bool, blob: [UInt8]) {
        self.vector = vector
        self.deleted = deleted
        self.blob = blob
    }
}

extension StoredVersion: StorableVersion {
    /// The blob's length: what the version counts for in its account's byte quota.
    package var byteCount: Int { blob.count }
}

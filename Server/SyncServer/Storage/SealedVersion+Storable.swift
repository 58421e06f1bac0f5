import SyncCore

/// The server keeps SyncCore's ``SealedVersion`` as it is: an opaque sealed payload with its
/// version vector and deleted flag (a tombstone is sealed too). It reads only the vector, the flag
/// and the payload's size.
extension SealedVersion: StorableVersion {
    /// The payload's length: what the version counts for in its account's byte quota.
    package var byteCount: Int { payload.count }
}

import KeychainCrypto
import KeychainModel
import SyncCore

/// Seals and opens item versions with the account's keys: for the server (zone as is) and for the
/// client's own state file (zone prefixed `local-state/`, so neither blob opens as the other).
package struct VersionSealer: Sendable {
    /// The account keys of every epoch held: versions are sealed under the newest, opened under
    /// the one their blob names (decision 0177); item IDs stay under epoch 1's.
    package let keys: AccountKeys

    /// The epoch an account starts in: its creation's password and recovery wraps are of it.
    package static let firstEpoch: UInt32 = 1
    package let account: String
    package let zone: ZoneID
    /// The keychain's class layer of the state file's copies (decision 0237); nil for a zone whose
    /// items no lock takes away (the key-value stores).
    package private(set) var classLayer: StateClassLayer?
    /// This device and its identity key: every version sealed for the server is signed with it,
    /// inside the seal (decision 0275); nil for a device enrolled before identity keys (it signs
    /// nothing).
    package private(set) var signer: (device: DeviceID, key: DeviceSigningKey)?

    /// The largest blob the server takes by default (`sync-server --max-blob-bytes`, 64 KiB): a
    /// version that would seal larger is set aside instead of pushed (decision 0105).
    package static let serverBlobLimit = 64 << 10

    package init(keys: AccountKeys, account: String, zone: ZoneID) {
        self.keys = keys
        self.account = account
        self.zone = zone
    }

    package func seal(_ version: ItemVersion, item: ItemID, forLocalState: Bool = false) throws(CryptoError) -> [UInt8] {
        var envelope = ItemEnvelope(payload: Self.payload(of: version), modificationTime: version.modifiedAt, device: version.device)
        let context = context(item: item, vector: version.vector, deleted: version.isDeleted, local: forLocalState, epoch: keys.currentEpoch)
        if !forLocalState, let signer { envelope = try envelope.signed(by: signer.device, with: signer.key, context: context) }
        return try keys.seal(envelope, context: context)
    }

    /// Whether `blob` names a key epoch later than every one held: a version written after a
    /// revocation this device has not read in the device log yet, which opens once it has
    /// (decision 0251). A blob of an epoch between held ones, or of none, does not count: no
    /// later read of the log brings its key.
    package func namesAnEpochNotHeldYet(_ blob: [UInt8]) -> Bool {
        guard let epoch = AccountKeys.epoch(ofBlob: blob) else { return false }
        return epoch > keys.currentEpoch
    }

    /// The sealer that signs what it seals for the server as `device`, with its identity key `key`
    /// (decision 0275); none without a key.
    package func with(signer key: DeviceSigningKey?, as device: DeviceID) -> VersionSealer {
        var copy = self
        copy.signer = key.map { (device, $0) }
        return copy
    }

    /// The sealer with `classLayer` for the state file's copies.
    package func with(classLayer: StateClassLayer?) -> VersionSealer {
        var copy = self
        copy.classLayer = classLayer
        return copy
    }

    /// The keys the class layer needs for one load or commit, read at once; nil without a layer.
    package func stateClassKeys() throws(SyncClientError) -> StateClassLayer.Keys? {
        try classLayer?.keys()
    }

    /// `version` sealed for the client's own state file: under the account key, its content first
    /// under its class's key where the class layer takes it (decision 0237).
    /// - Throws: `keychainLocked` when that class is locked away now.
    package func sealForState(_ version: ItemVersion, item: ItemID, classKeys: StateClassLayer.Keys?) throws(SyncClientError) -> [UInt8] {
        var copy = version
        if let classLayer, !version.isDeleted {
            copy.content = try classLayer.seal(version.content, zone: zone, item: item, keys: classKeys ?? [:])
        }
        do {
            return try seal(copy, item: item, forLocalState: true)
        } catch {
            throw SyncClientError.mapped(error)
        }
    }

    /// Opens a version ``sealForState(_:item:classKeys:)`` sealed; its content stays sealed while
    /// its class's key is not in `classKeys` (``isSealedAway(_:)``).
    /// - Parameter layered: Set when the copy had a class layer, or needs none.
    package func openFromState(
        _ blob: [UInt8], item: ItemID, vector: VersionVector, deleted: Bool, classKeys: StateClassLayer.Keys?, layered: inout Bool
    ) throws(SyncClientError) -> ItemVersion {
        var version: ItemVersion
        do {
            version = try open(blob, item: item, vector: vector, deleted: deleted, forLocalState: true)
        } catch {
            throw SyncClientError.mapped(error)
        }
        guard let classLayer, !deleted else {
            layered = true
            return version
        }
        layered = StateClassLayer.isSealedAway(version.content) || StateClassLayer.lockedClass(of: version.content) == nil
        version.content = try classLayer.open(version.content, zone: zone, item: item, keys: classKeys ?? [:])
        return version
    }

    /// Whether `version`'s content is still sealed under a class locked away when it was loaded:
    /// it cannot be pushed or handed to the keychain before the unlock.
    package func isSealedAway(_ version: ItemVersion) -> Bool {
        classLayer != nil && !version.isDeleted && StateClassLayer.isSealedAway(version.content)
    }

    /// The opaque ID of the keychain item with `primaryKey` in this zone.
    package func itemID(of primaryKey: PrimaryKey) -> ItemID {
        keys.itemID(zone: zone.rawValue, fields: primaryKey.fields.map { (name: $0.name, value: $0.bytes) })
    }

    /// The length `version`'s blob for the server has, without sealing it.
    package func sealedLength(of version: ItemVersion) -> Int {
        let metadata = 8 + version.origin.canonicalEncoding.count + version.overwritten.canonicalEncoding.count
        return AccountKeys.sealedLength(
            payloadLength: metadata + version.content.count, device: version.device, epoch: keys.currentEpoch, signer: signer?.device)
    }

    /// The batch with every version sealed for the server; one `ahead` holds, sealed by this sealer
    /// for the same item and version, is taken as it is.
    package func seal(_ batch: PushBatch<ItemVersion>, reusing ahead: SealedAhead? = nil) throws(CryptoError) -> PushBatch<SealedVersion> {
        var sealed: [PushedItem<SealedVersion>] = []
        sealed.reserveCapacity(batch.items.count)
        let reusable = ahead.flatMap { $0.epoch == keys.currentEpoch && $0.signer == signer?.device ? $0.blobs : nil } ?? [:]
        for pushed in batch.items {
            let blob = if let early = reusable[pushed.item], early.version == pushed.version {
                early.blob
            } else {
                try seal(pushed.version, item: pushed.item)
            }
            sealed.append(PushedItem(item: pushed.item, version: SealedVersion(
                vector: pushed.version.vector, isDeleted: pushed.version.isDeleted, payload: blob)))
        }
        return PushBatch(device: batch.device, zone: batch.zone, batchID: batch.batchID, cursor: batch.cursor, items: sealed)
    }

    /// `items` sealed for the server ahead of the batch that may take them (``ZoneSyncMachine/followingBatch``);
    /// a version that does not seal is left to that batch, which reports the error.
    package func sealAhead(_ items: [PushedItem<ItemVersion>]) -> SealedAhead {
        var blobs: [ItemID: (version: ItemVersion, blob: [UInt8])] = [:]
        blobs.reserveCapacity(items.count)
        for pushed in items {
            if let blob = try? seal(pushed.version, item: pushed.item) { blobs[pushed.item] = (pushed.version, blob) }
        }
        return SealedAhead(epoch: keys.currentEpoch, signer: signer?.device, blobs: blobs)
    }

    /// Opens a version; with `writers` (the device log this device verified, or a shared group's
    /// verified log), only one they admit the writer of (decisions 0275, 0291).
    /// - Throws: ``CryptoError`` `authenticationFailed` for a blob that does not open,
    ///   `writerNotAdmitted` for one whose writer `writers` does not admit.
    package func open(
        _ blob: [UInt8], item: ItemID, vector: VersionVector, deleted: Bool, forLocalState: Bool = false, writers: (any WriterAdmission)? = nil
    ) throws(CryptoError) -> ItemVersion {
        let (envelope, context) = try envelope(of: blob, item: item, vector: vector, deleted: deleted, forLocalState: forLocalState)
        if let refusal = writers?.refusal(of: envelope, context: context, blob: blob) { throw refusal.error }
        guard let (origin, overwritten, content) = Self.parts(of: envelope.payload) else { throw Self.malformed }
        return ItemVersion(
            vector: vector, isDeleted: deleted, modifiedAt: envelope.modificationTime, device: envelope.device, content: content,
            origin: origin, overwritten: overwritten)
    }

    /// A blob's envelope, opened under the epoch its header names, and the context it opened for;
    /// no writer checked.
    package func envelope(
        of blob: [UInt8], item: ItemID, vector: VersionVector, deleted: Bool, forLocalState: Bool = false
    ) throws(CryptoError) -> (ItemEnvelope, ItemBlobContext) {
        guard let epoch = AccountKeys.epoch(ofBlob: blob) else { throw Self.malformed }
        let context = context(item: item, vector: vector, deleted: deleted, local: forLocalState, epoch: epoch)
        return (try keys.open(blob, context: context), context)
    }

    private static let malformed = CryptoError(code: .authenticationFailed, message: "authentication failed")

    /// The envelope's payload: the version's sync metadata and the item's content,
    /// `len(origin) (4) ‖ origin ‖ len(overwritten) (4) ‖ overwritten ‖ content`, vectors in their
    /// canonical encoding. Sealed, so the server sees none of it.
    static func payload(of version: ItemVersion) -> [UInt8] {
        let origin = version.origin.canonicalEncoding
        let overwritten = version.overwritten.canonicalEncoding
        var bytes: [UInt8] = []
        bytes.reserveCapacity(8 + origin.count + overwritten.count + version.content.count)
        for part in [origin, overwritten] {
            withUnsafeBytes(of: UInt32(part.count).bigEndian) { bytes += $0 }
            bytes += part
        }
        bytes += version.content
        return bytes
    }

    static func parts(of payload: [UInt8]) -> (VersionVector, VersionVector, [UInt8])? {
        var rest = payload[...]
        var vectors: [VersionVector] = []
        for _ in 0..<2 {
            guard rest.count >= 4 else { return nil }
            let length = Int(rest.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            rest = rest.dropFirst(4)
            guard rest.count >= length, let vector = try? VersionVector(canonicalEncoding: rest.prefix(length)) else { return nil }
            vectors.append(vector)
            rest = rest.dropFirst(length)
        }
        return (vectors[0], vectors[1], Array(rest))
    }

    private func context(item: ItemID, vector: VersionVector, deleted: Bool, local: Bool, epoch: UInt32) -> ItemBlobContext {
        ItemBlobContext(
            account: account, zone: local ? "local-state/" + zone.rawValue : zone.rawValue, itemID: item,
            keyEpoch: epoch, versionVector: vector, isDeleted: deleted)
    }
}

/// Versions sealed for the server while the request before theirs was out (issue 35): sealing is
/// a pure function of the version, the item and the keys (its nonce aside), so a blob sealed
/// early is the one sealing later would make, as long as the version and the keys are the same.
package struct SealedAhead: Sendable {
    /// The key epoch and signer they were sealed with.
    let epoch: UInt32
    let signer: DeviceID?
    /// The blobs, by item, with the versions they seal.
    let blobs: [ItemID: (version: ItemVersion, blob: [UInt8])]
}

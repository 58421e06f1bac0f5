import KeychainCrypto
import SyncCore

/// Seals and opens item versions with the account's keys: for the server (zone as is) and for the
/// client's own state file (zone prefixed `local-state/`, so neither blob opens as the other).
package struct VersionSealer: Sendable {
    /// The account key's epoch; there is no key rotation yet.
    package static let keyEpoch: UInt32 = 1

    package let keys: AccountKeys
    package let account: String
    package let zone: ZoneID

    package init(keys: AccountKeys, account: String, zone: ZoneID) {
        self.keys = keys
        self.account = account
        self.zone = zone
    }

    package func seal(_ version: ItemVersion, item: ItemID, forLocalState: Bool = false) throws(CryptoError) -> [UInt8] {
        let envelope = ItemEnvelope(payload: version.content, modificationTime: version.modifiedAt, device: version.device)
        return try keys.seal(envelope, context: context(item: item, vector: version.vector, deleted: version.isDeleted, local: forLocalState))
    }

    package func open(
        _ blob: [UInt8], item: ItemID, vector: VersionVector, deleted: Bool, forLocalState: Bool = false
    ) throws(CryptoError) -> ItemVersion {
        let envelope = try keys.open(blob, context: context(item: item, vector: vector, deleted: deleted, local: forLocalState))
        return ItemVersion(vector: vector, isDeleted: deleted, modifiedAt: envelope.modificationTime, device: envelope.device, content: envelope.payload)
    }

    private func context(item: ItemID, vector: VersionVector, deleted: Bool, local: Bool) -> ItemBlobContext {
        ItemBlobContext(
            account: account, zone: local ? "local-state/" + zone.rawValue : zone.rawValue, itemID: item,
            keyEpoch: Self.keyEpoch, versionVector: vector, isDeleted: deleted)
    }
}

import Crypto
import KeychainCrypto
import SyncCore

/// Values shared by the tests.
enum Fixtures {
    static let account = "alice@example.com"
    static let deviceA = DeviceID("deviceA")!
    static let deviceB = DeviceID("deviceB")!

    static func itemID(_ keys: AccountKeys, _ name: String, zone: String = "keychain") -> ItemID {
        keys.itemID(zone: zone, fields: [(name: "key", value: Array(name.utf8))])
    }

    static func context(_ keys: AccountKeys, item: String = "item", zone: String = "keychain", deleted: Bool = false) -> ItemBlobContext {
        ItemBlobContext(
            account: account, zone: zone, itemID: itemID(keys, item, zone: zone), keyEpoch: 1,
            versionVector: VersionVector([deviceA: 2, deviceB: 1]), isDeleted: deleted
        )
    }

    static func envelope(payloadSize: Int = 300) -> ItemEnvelope {
        ItemEnvelope(payload: (0..<payloadSize).map { UInt8(truncatingIfNeeded: $0 &* 7) }, modificationTime: 1_700_000_000_000, device: deviceA)
    }

    /// Parameters at the floor, so a test derivation stays fast.
    static func fastParameters() throws -> KDFParameters {
        try KDFParameters(logN: KDFParameters.minimumLogN, r: 8, p: 1, salt: Array(repeating: 7, count: 16))
    }
}

import Crypto
import Foundation
import KeychainModel

/// The keys that keep an item's metadata out of the keychain file (decision 0280): its attributes,
/// its history's and its journal's primary keys are sealed, and lookups and the uniqueness rule go
/// through keyed blind indexes.
///
/// Both keys derive from the "always" class key, which the device key wraps and no lock takes
/// away: a lookup, an add's uniqueness check and the sync's journal work whatever the lock state,
/// as they did with plaintext columns. So a copy of the database alone shows no attribute; a copy
/// with the device key file beside it shows them (as it shows the "always" class's secrets).
struct MetadataKeys: Sendable {
    private let sealing: SymmetricKey
    /// HMAC-SHA256 keyed with the index key, copied for each index: the key is hashed in once.
    private let keyedIndex: HMAC<SHA256>

    init(alwaysClassKey: SymmetricKey) {
        sealing = Self.derive(alwaysClassKey, "keychain metadata sealing")
        keyedIndex = HMAC<SHA256>(key: Self.derive(alwaysClassKey, "keychain metadata index"))
    }

    private static func derive(_ key: SymmetricKey, _ purpose: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: key, info: Array(purpose.utf8), outputByteCount: 32)
    }

    // MARK: - Blind indexes

    /// The uniqueness index of a primary key: equal keys give equal bytes, and nothing else can be
    /// read from them without the index key.
    func keyIndex(_ primaryKey: PrimaryKey) -> Data {
        IndexedKey(primaryKey, keys: self).index
    }

    /// A primary key's index and the key sealed for `purpose`, its encoding made once; bound to
    /// `identity`, or to the index itself when there is none (a remote version's row).
    func indexedKey(_ primaryKey: PrimaryKey, _ purpose: Purpose, identity: [UInt8]? = nil) throws(KeychainError) -> (index: Data, sealed: Data) {
        let index = IndexedKey(primaryKey, keys: self)
        return (index.index, try index.sealed(purpose, identity: identity, keys: self))
    }

    /// A primary key's encoding and uniqueness index, made once for a lookup that may be followed
    /// by an insert sealing the key.
    struct IndexedKey {
        let bytes: Data
        let index: Data

        init(_ primaryKey: PrimaryKey, keys: MetadataKeys) {
            bytes = primaryKey.storageBytes
            index = keys.blindIndex(MetadataKeys.keyDomain, bytes)
        }

        /// The key sealed for `purpose`, bound to `identity` or to the index.
        func sealed(_ purpose: Purpose, identity: [UInt8]? = nil, keys: MetadataKeys) throws(KeychainError) -> Data {
            try keys.seal(Array(bytes), purpose, identity: identity ?? Array(index))
        }
    }

    /// A lookup index of an item of `itemClass` whose first one or two lookup attributes
    /// (``lookupAttributes(of:)``) have `values`: what a query naming those attributes reads.
    func lookupIndex(_ itemClass: ItemClass, _ values: [AttributeValue]) -> Data {
        blindIndex(Self.lookupDomains[itemClass]![values.count - 1]) { hmac in
            for value in values {
                let bytes = value.canonicalBytes
                hmac.update(data: withUnsafeBytes(of: UInt32(bytes.count).bigEndian, Array.init))
                hmac.update(data: bytes)
            }
        }
    }

    /// The domain label of the key index.
    private static let keyDomain = Array("key".utf8) + [0]

    /// The domain labels of the lookup indexes: of the first attribute, of the first two.
    private static let lookupDomains = Dictionary(uniqueKeysWithValues: ItemClass.allCases.map { itemClass in
        (itemClass, [1, 2].map { Array("lookup \(itemClass.rawValue) \($0)".utf8) + [0] })
    })

    /// The attributes lookup indexes are kept for, in the order queries of the class name them
    /// (service or server then account, issuer then serial number, application tag then label):
    /// one index of the first, one of both. Missing on an item counts as its empty value.
    static func lookupAttributes(of itemClass: ItemClass) -> [Attribute] {
        switch itemClass {
        case .genericPassword: [.service, .account]
        case .internetPassword: [.server, .account]
        case .certificate: [.issuer, .serialNumber]
        case .key: [.applicationTag, .applicationLabel]
        }
    }

    /// HMAC-SHA256 of a domain label and what `body` adds, cut to 16 bytes (a chance collision
    /// would only make two different keys look equal: about one in 2^64 over four billion items).
    private func blindIndex(_ domain: [UInt8], _ body: (inout HMAC<SHA256>) -> Void) -> Data {
        var hmac = keyedIndex
        hmac.update(data: domain)
        body(&hmac)
        return Data(hmac.finalize().prefix(16))
    }

    private func blindIndex(_ domain: [UInt8], _ bytes: Data) -> Data {
        blindIndex(domain) { $0.update(data: bytes) }
    }

    // MARK: - Sealing

    /// What sealed metadata is, bound into its associated data so that no sealed value can be
    /// moved to another purpose or row.
    enum Purpose: String {
        case itemAttributes = "item-attributes"
        case historyAttributes = "history-attributes"
        case journalKey = "journal-key"
        case remoteVersionKey = "remote-version-key"
    }

    /// Seals `bytes` (AES-256-GCM, random nonce) for `purpose`, bound to the row `identity`.
    func seal(_ bytes: [UInt8], _ purpose: Purpose, identity: [UInt8]) throws(KeychainError) -> Data {
        do {
            return try AES.GCM.seal(bytes, using: sealing, authenticating: Self.context(purpose, identity)).combined!
        } catch {
            throw KeychainError(.decode, "sealing metadata failed")
        }
    }

    /// Opens bytes sealed by ``seal(_:_:identity:)`` with the same purpose and identity.
    func open(_ sealed: Data, _ purpose: Purpose, identity: [UInt8]) throws(KeychainError) -> [UInt8] {
        do {
            return Array(try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: sealing, authenticating: Self.context(purpose, identity)))
        } catch {
            throw KeychainError(.decode, "stored metadata could not be decrypted")
        }
    }

    private static func context(_ purpose: Purpose, _ identity: [UInt8]) -> [UInt8] {
        SecretSealer.formatTag + Array(purpose.rawValue.utf8) + [0] + identity
    }

    /// Opens a primary key sealed by ``indexedKey(_:_:identity:)``.
    func openKey(_ sealed: Data, _ purpose: Purpose, identity: [UInt8]) throws(KeychainError) -> PrimaryKey {
        guard let key = PrimaryKey(storageBytes: Data(try open(sealed, purpose, identity: identity))) else {
            throw KeychainError(.decode, "stored primary key cannot be decoded")
        }
        return key
    }

    /// Seals an item's attributes for `purpose` (the item's own row, or a history entry).
    func sealAttributes(_ attributes: ItemAttributes, _ purpose: Purpose, identity: [UInt8]) throws(KeychainError) -> Data {
        try seal(attributes.storageBytes, purpose, identity: identity)
    }

    /// Opens attributes sealed by ``sealAttributes(_:_:identity:)``.
    func openAttributes(_ sealed: Data, _ purpose: Purpose, identity: [UInt8]) throws(KeychainError) -> ItemAttributes {
        guard let attributes = ItemAttributes(storageBytes: try open(sealed, purpose, identity: identity)) else {
            throw KeychainError(.decode, "stored attributes cannot be decoded")
        }
        return attributes
    }
}

import KeychainCrypto
import KeychainModel
import KeychainStore

/// The account key of every epoch, the device token and identity keys (and enrolments under way,
/// decision 0277), kept in the local keychain as `ThisDeviceOnly`,
/// non-synchronizable generic passwords ("after first unlock", so the daemon works while the
/// keychain is locked; with a passcode set, the passcode protects that class at rest, decision
/// 0136), in an access group of their own.
package struct DeviceSecrets: Sendable {
    package static let service = "synckeychain.sync-client"
    package static let accessGroup = ItemRules.syncClientAccessGroup
    private static let accountKeyName = "account-key"
    private static let tokenName = "device-token"
    private static let signingKeyName = "device-signing-key"
    private static let agreementKeyName = "device-agreement-key"

    package let keychain: Keychain

    package init(keychain: Keychain) { self.keychain = keychain }

    /// Stores both secrets, replacing earlier ones.
    package func save(accountKey: AccountKey, token: String) throws(SyncClientError) {
        try put(Self.accountKeyName, accountKey.rawRepresentation)
        try put(Self.tokenName, Array(token.utf8))
    }

    /// Replaces the device token (a new sign-in).
    package func saveToken(_ token: String) throws(SyncClientError) {
        try put(Self.tokenName, Array(token.utf8))
    }

    /// The account key of epoch 1.
    package func accountKey() throws(SyncClientError) -> AccountKey {
        try key(try get(Self.accountKeyName))
    }

    /// The account key of every epoch this device holds (decision 0176): epoch 1 as
    /// `account-key`, each later one as `account-key-epoch-N`, read up to the first missing.
    package func epochKeys() throws(SyncClientError) -> [UInt32: AccountKey] {
        var keys: [UInt32: AccountKey] = [1: try accountKey()]
        for (epoch, bytes) in try storedLaterEpochs() { keys[epoch] = try key(bytes) }
        return keys
    }

    /// The stored keys of epochs after the first, read up to the first missing.
    private func storedLaterEpochs() throws(SyncClientError) -> [(epoch: UInt32, bytes: [UInt8])] {
        var found: [(epoch: UInt32, bytes: [UInt8])] = []
        var epoch: UInt32 = 2
        while let bytes = try find(Self.epochKeyName(epoch)) {
            found.append((epoch, bytes))
            epoch += 1
        }
        return found
    }

    /// The keyring of every epoch's key this device holds (decision 0177).
    package func accountKeys() throws(SyncClientError) -> AccountKeys {
        do {
            return try AccountKeys(epochs: try epochKeys())
        } catch let error as CryptoError {
            throw SyncClientError(.localStorage, "the stored account keys are damaged; \(SyncClientError.enrolAgain)", underlying: error)
        } catch let error as SyncClientError {
            throw error
        } catch {
            throw SyncClientError(.localStorage, "the stored account keys are damaged; \(SyncClientError.enrolAgain)", underlying: error)
        }
    }

    /// Stores the keys of epochs after the first that are not stored yet.
    package func save(epochKeys keys: [UInt32: AccountKey]) throws(SyncClientError) {
        for (epoch, key) in keys.sorted(by: { $0.key < $1.key }) where epoch > 1 {
            if try find(Self.epochKeyName(epoch)) == nil { try put(Self.epochKeyName(epoch), key.rawRepresentation) }
        }
    }

    /// The account key of every epoch and the token of a new enrolment (decision 0176).
    package func save(epochKeys keys: [UInt32: AccountKey], token: String) throws(SyncClientError) {
        guard let first = keys[1] else { throw SyncClientError(.untrustedAccountState, "the account key of epoch 1 is missing") }
        try save(accountKey: first, token: token)
        try save(epochKeys: keys)
    }

    private static func epochKeyName(_ epoch: UInt32) -> String { "\(accountKeyName)-epoch-\(epoch)" }

    private func key(_ bytes: [UInt8]) throws(SyncClientError) -> AccountKey {
        do {
            return try AccountKey(rawRepresentation: bytes)
        } catch {
            throw SyncClientError(.localStorage, "the stored account key is damaged; \(SyncClientError.enrolAgain)", underlying: error)
        }
    }

    /// The device token.
    package func token() throws(SyncClientError) -> String {
        String(decoding: try get(Self.tokenName), as: UTF8.self)
    }

    /// Stores the device's identity keys (decision 0122), replacing earlier ones.
    package func save(identity: DeviceIdentity) throws(SyncClientError) {
        try put(Self.signingKeyName, identity.signingKey.rawRepresentation)
        try put(Self.agreementKeyName, identity.agreementKey.seedRepresentation)
    }

    /// The device's identity keys; nil for a device enrolled before they existed.
    package func identity() throws(SyncClientError) -> DeviceIdentity? {
        guard let signing = try find(Self.signingKeyName), let agreement = try find(Self.agreementKeyName) else { return nil }
        do {
            return DeviceIdentity(
                signingKey: try DeviceSigningKey(rawRepresentation: signing),
                agreementKey: try DeviceAgreementKey(seedRepresentation: agreement))
        } catch {
            throw SyncClientError(.localStorage, "the stored device identity keys are damaged; \(SyncClientError.enrolAgain)", underlying: error)
        }
    }

    /// Removes every secret of this device's enrolment (leaving the account).
    package func removeAll() throws(SyncClientError) {
        let epochNames = try storedLaterEpochs().map { Self.epochKeyName($0.epoch) }
        for name in [Self.accountKeyName, Self.tokenName, Self.signingKeyName, Self.agreementKeyName] + epochNames {
            try remove(name)
        }
    }

    /// Removes the secret called `name`, if it is there.
    func remove(_ name: String) throws(SyncClientError) {
        do {
            try keychain.delete(query(name))
        } catch let error where error.code == .itemNotFound {
        } catch {
            throw SyncClientError(.localStorage, "cannot remove the \(name) from the keychain: \(error.message)", underlying: error)
        }
    }

    func query(_ name: String) -> Query {
        var attributes = ItemAttributes()
        attributes.service = Self.service
        attributes.account = name
        attributes.accessGroup = Self.accessGroup
        // Named, so the query runs while the keychain is locked: the class stays readable after
        // the first unlock (decision 0136), and the daemon keeps syncing.
        attributes.accessible = .afterFirstUnlockThisDeviceOnly
        return Query(itemClass: .genericPassword, attributes: attributes, synchronizable: .no)
    }

    func put(_ name: String, _ secret: [UInt8]) throws(SyncClientError) {
        let item = Item.genericPassword(service: Self.service, account: name, data: secret) { attributes in
            attributes.accessGroup = Self.accessGroup
            attributes.accessible = .afterFirstUnlockThisDeviceOnly
            attributes.synchronizable = false
            attributes.label = "sync-client \(name)"
        }
        do {
            do {
                try keychain.delete(query(name))
            } catch let error where error.code == .itemNotFound {}
            _ = try keychain.add(item)
        } catch {
            throw SyncClientError(.localStorage, "cannot store the \(name) in the keychain: \(error.message)", underlying: error)
        }
    }

    private func get(_ name: String) throws(SyncClientError) -> [UInt8] {
        guard let secret = try find(name) else {
            throw SyncClientError(.notEnrolled, "the \(name) is missing from the keychain; \(SyncClientError.enrolAgain)")
        }
        return secret
    }

    private func find(_ name: String) throws(SyncClientError) -> [UInt8]? {
        do {
            return try keychain.findData(query(name))
        } catch let error where error.code == .itemNotFound {
            return nil
        } catch {
            throw SyncClientError(.localStorage, "cannot read the \(name) from the keychain: \(error.message)", underlying: error)
        }
    }
}

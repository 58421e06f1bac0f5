/// An account's identity towards other accounts (decision 0282): an Ed25519 key that signs for
/// the account and an X-Wing key that other accounts seal to, both derived from the account key of
/// one epoch. Every current device of the account holds them without anything being stored or
/// wrapped, and a device revoked before the epoch does not: a revocation starts an epoch, and so a
/// new identity that the revoked device cannot read or sign for.
public struct AccountIdentity: Sendable {
    /// The account's name on the server.
    public let account: String
    /// The epoch whose account key the keys derive from.
    public let epoch: UInt32
    let signing: DeviceSigningKey
    /// The key other accounts seal to (its public half is on the ``card``).
    public let agreement: DeviceAgreementKey

    /// The identity of `account` at `epoch`, whose account key is `accountKey`.
    public init(account: String, epoch: UInt32, accountKey: AccountKey) {
        self.account = account
        self.epoch = epoch
        // A 32-byte seed always makes a key pair of either kind.
        signing = try! DeviceSigningKey(rawRepresentation: KeyPurpose.identitySigning.derive(from: accountKey.key).bytes)
        agreement = try! DeviceAgreementKey(seedRepresentation: KeyPurpose.identityAgreement.derive(from: accountKey.key).bytes)
    }

    /// The public card other accounts fetch and pin, signed by the identity itself.
    public func card() throws(CryptoError) -> AccountIdentityCard {
        let unsigned = AccountIdentityCard(account: account, epoch: epoch, signingKey: signing.publicKey, agreementKey: agreement.publicKey, signature: [])
        return AccountIdentityCard(
            account: account, epoch: epoch, signingKey: signing.publicKey, agreementKey: agreement.publicKey,
            signature: try signing.signature(for: unsigned.signedBytes))
    }

    /// An Ed25519 signature of `message` by the account (a group log entry it signs, for example).
    public func signature(for message: [UInt8]) throws(CryptoError) -> [UInt8] {
        try signing.signature(for: message)
    }
}

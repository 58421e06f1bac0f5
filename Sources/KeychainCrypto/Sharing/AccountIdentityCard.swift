import Crypto

/// The public half of an ``AccountIdentity`` as the server carries it to other accounts (decision
/// 0282): the account's name, the epoch, the two public keys and the identity's own signature over
/// them, so a card cannot name one account with another's keys. Whether the keys are really the
/// account's is for people to confirm: they compare a ``SafetyCode`` once, and the contact is
/// pinned to the card's ``fingerprint``.
///
/// Signed bytes: `len(label) ‖ label ‖ len(account) ‖ account ‖ epoch (4) ‖ len(signing key) ‖
/// signing key ‖ len(agreement key) ‖ agreement key`, label `synckeychain/v1/account-identity`.
/// Wire form: `version (1) = 1 ‖ len(account) ‖ account ‖ epoch (4) ‖ len(signing key) ‖ signing key
/// ‖ len(agreement key) ‖ agreement key ‖ len(signature) ‖ signature`.
public struct AccountIdentityCard: Sendable, Equatable {
    /// The account's name on the server.
    public let account: String
    /// The epoch the keys belong to.
    public let epoch: UInt32
    /// The key that signs for the account.
    public let signingKey: DevicePublicKey
    /// The X-Wing public key (1,216 bytes) other accounts seal to.
    public let agreementKey: [UInt8]
    let signature: [UInt8]

    private static let label = "synckeychain/v1/account-identity"
    private static let fingerprintLabel = "synckeychain/v1/account-fingerprint"
    private static let agreementKeyLength = 1216
    /// The longest account name a card carries (the server's own limit is shorter).
    static let maximumAccountLength = 256

    init(account: String, epoch: UInt32, signingKey: DevicePublicKey, agreementKey: [UInt8], signature: [UInt8]) {
        self.account = account
        self.epoch = epoch
        self.signingKey = signingKey
        self.agreementKey = agreementKey
        self.signature = signature
    }

    /// Reads a card the server served as the identity of `account`, checking its shape, that it
    /// names `account` and that its own key signed it.
    ///
    /// - Throws: ``CryptoError`` ``CryptoError/Code/invalidInput`` for a malformed card or one of
    ///   another account, ``CryptoError/Code/authenticationFailed`` when the signature does not
    ///   verify.
    public init(decoding bytes: [UInt8], of account: String) throws(CryptoError) {
        var reader = ByteReader(bytes[...])
        guard reader.read(count: 1) == [1],
            let name = reader.readLengthPrefixed(), name.count <= Self.maximumAccountLength,
            let epoch = reader.readBigEndian(UInt32.self),
            let signingKey = reader.readLengthPrefixed(),
            let agreementKey = reader.readLengthPrefixed(), agreementKey.count == Self.agreementKeyLength,
            (try? XWingMLKEM768X25519.PublicKey(rawRepresentation: Array(agreementKey))) != nil,
            let signature = reader.readLengthPrefixed(), signature.count == 64, reader.isAtEnd
        else { throw .invalidInput("an account identity card is malformed") }
        guard Array(name) == Array(account.utf8) else {
            throw .invalidInput("the identity card names another account")
        }
        self.init(
            account: account, epoch: epoch, signingKey: try DevicePublicKey(rawRepresentation: signingKey), agreementKey: Array(agreementKey),
            signature: Array(signature))
        guard self.signingKey.isValidSignature(signature, for: signedBytes) else {
            throw CryptoError(code: .authenticationFailed, message: "the identity card's signature does not verify")
        }
    }

    /// The card as the server stores it.
    public var encoded: [UInt8] {
        var bytes: [UInt8] = [1]
        bytes.appendLengthPrefixed(Array(account.utf8))
        bytes.appendBigEndian(epoch)
        bytes.appendLengthPrefixed(signingKey.rawRepresentation)
        bytes.appendLengthPrefixed(agreementKey)
        bytes.appendLengthPrefixed(signature)
        return bytes
    }

    var signedBytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendLengthPrefixed(Array(Self.label.utf8))
        bytes.appendLengthPrefixed(Array(account.utf8))
        bytes.appendBigEndian(epoch)
        bytes.appendLengthPrefixed(signingKey.rawRepresentation)
        bytes.appendLengthPrefixed(agreementKey)
        return bytes
    }

    /// SHA-256 of the account's name and both public keys: what a contact is pinned to. A new
    /// epoch's card has another fingerprint, so it is verified again before it is trusted.
    public var fingerprint: [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendLengthPrefixed(Array(Self.fingerprintLabel.utf8))
        bytes.appendLengthPrefixed(Array(account.utf8))
        bytes.appendLengthPrefixed(signingKey.rawRepresentation)
        bytes.appendLengthPrefixed(agreementKey)
        return Array(SHA256.hash(data: bytes))
    }

    /// Whether `signature` is the account's signature of `message`.
    public func isValidSignature(_ signature: some Collection<UInt8>, for message: [UInt8]) -> Bool {
        signingKey.isValidSignature(signature, for: message)
    }
}

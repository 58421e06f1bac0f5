import Crypto

/// The account key: 256 random bits that every item key derives from. It is stored on the server
/// only wrapped, under the password's wrapping key and optionally under a ``RecoveryKey``; a
/// password change re-wraps it and re-encrypts nothing.
public struct AccountKey: Sendable {
    package let key: SymmetricKey

    /// A new random account key.
    public static func generate() -> AccountKey {
        AccountKey(key: SymmetricKey(size: .bits256))
    }

    package init(key: SymmetricKey) {
        precondition(key.bitCount == 256, "an account key has 256 bits")
        self.key = key
    }

    /// Restores a key saved with ``rawRepresentation`` (for the device's own protected storage).
    ///
    /// - Throws: ``CryptoError`` with code ``CryptoError/Code/invalidInput`` unless 32 bytes.
    public init(rawRepresentation bytes: [UInt8]) throws(CryptoError) {
        guard bytes.count == 32 else { throw .invalidInput("an account key has 32 bytes") }
        self.init(key: SymmetricKey(data: bytes))
    }

    /// The key's 32 bytes, a secret: only for the device's own protected storage.
    public var rawRepresentation: [UInt8] { key.bytes }

    /// Whether `other` is the same key, compared in constant time.
    public func isSameKey(as other: AccountKey) -> Bool {
        key == other.key
    }

    /// Wraps the key under the password's wrapping key; the account, the KDF parameters the
    /// secrets were derived with and `epoch` are bound in, so unwrapping with any other value fails.
    ///
    /// Layout in docs/decisions/0021; 61 bytes.
    public func wrapped(with secrets: AccountSecrets, account: String, epoch: UInt32) throws(CryptoError) -> [UInt8] {
        try KeyWrap.seal(key, under: secrets.wrappingKey, associatedData: KeyWrap.passwordAssociatedData(account: account, parameters: secrets.parameters, epoch: epoch))
    }

    /// ``wrapped(with:account:epoch:)`` with a given nonce: for known-answer tests only.
    package func wrapped(with secrets: AccountSecrets, account: String, epoch: UInt32, nonce: [UInt8]) throws(CryptoError) -> [UInt8] {
        try KeyWrap.seal(key, under: secrets.wrappingKey, associatedData: KeyWrap.passwordAssociatedData(account: account, parameters: secrets.parameters, epoch: epoch), nonce: AEADLayout.nonce(nonce))
    }

    /// Unwraps a key wrapped by ``wrapped(with:account:epoch:)``.
    ///
    /// - Throws: ``CryptoError`` with code ``CryptoError/Code/authenticationFailed`` for every
    ///   failure (wrong password, changed parameters, account or epoch, tampered bytes).
    public static func unwrap(_ wrapped: [UInt8], with secrets: AccountSecrets, account: String, epoch: UInt32) throws(CryptoError) -> AccountKey {
        let key = try KeyWrap.open(wrapped, under: secrets.wrappingKey, associatedData: KeyWrap.passwordAssociatedData(account: account, parameters: secrets.parameters, epoch: epoch))
        return AccountKey(key: key)
    }

    /// Wraps the key under a recovery key, binding the account and `epoch`; 61 bytes.
    public func wrapped(with recoveryKey: RecoveryKey, account: String, epoch: UInt32) throws(CryptoError) -> [UInt8] {
        try KeyWrap.seal(key, under: recoveryKey.wrappingKey, associatedData: KeyWrap.recoveryAssociatedData(account: account, epoch: epoch))
    }

    /// The recovery-key wrap with a given nonce: for known-answer tests only.
    package func wrapped(with recoveryKey: RecoveryKey, account: String, epoch: UInt32, nonce: [UInt8]) throws(CryptoError) -> [UInt8] {
        try KeyWrap.seal(key, under: recoveryKey.wrappingKey, associatedData: KeyWrap.recoveryAssociatedData(account: account, epoch: epoch), nonce: AEADLayout.nonce(nonce))
    }

    /// Unwraps a key wrapped under a recovery key.
    ///
    /// - Throws: ``CryptoError`` with code ``CryptoError/Code/authenticationFailed`` for every failure.
    public static func unwrap(_ wrapped: [UInt8], with recoveryKey: RecoveryKey, account: String, epoch: UInt32) throws(CryptoError) -> AccountKey {
        let key = try KeyWrap.open(wrapped, under: recoveryKey.wrappingKey, associatedData: KeyWrap.recoveryAssociatedData(account: account, epoch: epoch))
        return AccountKey(key: key)
    }
}

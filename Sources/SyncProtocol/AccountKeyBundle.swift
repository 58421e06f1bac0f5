/// What a device needs, besides the password, to recover the account key: the KDF parameters and
/// salt, and the account key wrapped by the password-derived key (and optionally by a recovery
/// key). Opaque to the server; sent at account creation and password change, returned at sign-in.
public struct AccountKeyBundle: Hashable, Sendable, Codable {
    /// The KDF parameters the keys were derived with.
    public var kdf: PasswordKDF
    /// The KDF salt (16...64 bytes).
    public var salt: Base64Bytes
    /// The account key wrapped by the password-derived wrapping key.
    public var wrappedAccountKey: Base64Bytes
    /// The account key wrapped by the recovery key, if the user made one.
    public var wrappedRecoveryKey: Base64Bytes?

    /// Creates a bundle.
    public init(kdf: PasswordKDF, salt: Base64Bytes, wrappedAccountKey: Base64Bytes, wrappedRecoveryKey: Base64Bytes? = nil) {
        self.kdf = kdf
        self.salt = salt
        self.wrappedAccountKey = wrappedAccountKey
        self.wrappedRecoveryKey = wrappedRecoveryKey
    }
}

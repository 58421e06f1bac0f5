/// `POST /v1/recovery/keys`: proves the recovery key (by its auth key) and asks for the account's
/// key material, so the device can open the account key with the recovery key (decision 0132).
public struct RecoveryKeysRequest: Hashable, Sendable, Codable {
    /// The account name.
    public var account: String
    /// The auth key derived from the recovery key (16...64 bytes).
    public var recoveryAuthKey: Base64Bytes

    /// Creates a request.
    public init(account: String, recoveryAuthKey: Base64Bytes) {
        self.account = account
        self.recoveryAuthKey = recoveryAuthKey
    }
}

/// The answer to `POST /v1/recovery/keys`: the account's key material, with the account key
/// wrapped by the recovery key.
public struct RecoveryKeysResponse: Hashable, Sendable, Codable {
    /// The key material; `wrappedRecoveryKey` is present.
    public var keys: AccountKeyBundle

    /// Creates a response.
    public init(keys: AccountKeyBundle) { self.keys = keys }
}

/// `POST /v1/recovery/credentials`: sets a new password with the recovery key's auth key instead
/// of the old password's. Devices keep their tokens; the recovery key stays valid.
public struct RecoverCredentialsRequest: Hashable, Sendable, Codable {
    /// The account name.
    public var account: String
    /// The auth key derived from the recovery key.
    public var recoveryAuthKey: Base64Bytes
    /// The auth key derived from the new password.
    public var authKey: Base64Bytes
    /// The new key material: KDF parameters, salt and the account key wrapped under the new
    /// password (the server keeps its recovery wrap as it is).
    public var keys: AccountKeyBundle

    /// Creates a request.
    public init(account: String, recoveryAuthKey: Base64Bytes, authKey: Base64Bytes, keys: AccountKeyBundle) {
        self.account = account
        self.recoveryAuthKey = recoveryAuthKey
        self.authKey = authKey
        self.keys = keys
    }
}

/// `POST /v1/accounts`: create an account. The server keeps only a slow salted hash of `authKey`.
public struct CreateAccountRequest: Hashable, Sendable, Codable {
    /// The account name (1...128 bytes of UTF-8, no control characters).
    public var account: String
    /// The auth key derived from the password (16...64 bytes).
    public var authKey: Base64Bytes
    /// The key material the server keeps for the account's devices.
    public var keys: AccountKeyBundle
    /// The auth key derived from the recovery key (16...64 bytes), which the server keeps a verifier
    /// of for `recover` (decision 0132); absent, the account cannot be recovered.
    public var recoveryAuthKey: Base64Bytes?

    /// Creates a request.
    public init(account: String, authKey: Base64Bytes, keys: AccountKeyBundle, recoveryAuthKey: Base64Bytes? = nil) {
        self.account = account
        self.authKey = authKey
        self.keys = keys
        self.recoveryAuthKey = recoveryAuthKey
    }
}

/// `POST /v1/sign-in/parameters`: what a device needs to derive its keys before signing in. For an
/// unknown account the server answers with deterministic fake parameters, so the answer does not
/// reveal whether the account exists.
public struct PreSignInRequest: Hashable, Sendable, Codable {
    /// The account name.
    public var account: String

    /// Creates a request.
    public init(account: String) { self.account = account }
}

/// The answer to ``PreSignInRequest``.
public struct PreSignInResponse: Hashable, Sendable, Codable {
    /// The KDF parameters.
    public var kdf: PasswordKDF
    /// The KDF salt.
    public var salt: Base64Bytes

    /// Creates a response.
    public init(kdf: PasswordKDF, salt: Base64Bytes) {
        self.kdf = kdf
        self.salt = salt
    }
}

/// `PUT /v1/account/credentials`: change the password (a new auth key and re-wrapped account key),
/// authorised by a device token and the current auth key.
public struct ChangeCredentialsRequest: Hashable, Sendable, Codable {
    /// The auth key derived from the current password.
    public var currentAuthKey: Base64Bytes
    /// The auth key derived from the new password.
    public var authKey: Base64Bytes
    /// The new key material.
    public var keys: AccountKeyBundle

    /// Creates a request.
    public init(currentAuthKey: Base64Bytes, authKey: Base64Bytes, keys: AccountKeyBundle) {
        self.currentAuthKey = currentAuthKey
        self.authKey = authKey
        self.keys = keys
    }
}

/// The answer to ``CreateAccountRequest`` (`201 Created`).
public struct AccountCreatedResponse: Hashable, Sendable, Codable {
    /// The account name.
    public var account: String

    /// Creates a response.
    public init(account: String) { self.account = account }
}

/// `PUT /v1/account/approval-required`: whether new devices need an enrolled device's approval
/// (decision 0134). On, the server drops the account key's password wrap and keeps none while it
/// stays on; off, the request brings a new password wrap.
public struct ApprovalRequirementRequest: Hashable, Sendable, Codable {
    /// The auth key of the current password: the setting is the password holder's.
    public var currentAuthKey: Base64Bytes
    /// Whether approval is required from now on.
    public var required: Bool
    /// The account key wrapped under the current password; required when `required` is false.
    public var wrappedAccountKey: Base64Bytes?

    /// Creates a request.
    public init(currentAuthKey: Base64Bytes, required: Bool, wrappedAccountKey: Base64Bytes?) {
        self.currentAuthKey = currentAuthKey
        self.required = required
        self.wrappedAccountKey = wrappedAccountKey
    }
}

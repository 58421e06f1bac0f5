import SyncCore

/// `POST /v1/sign-in`: sign a device in with the auth key; answers with a bearer token.
public struct SignInRequest: Hashable, Sendable, Codable {
    /// The account name.
    public var account: String
    /// The auth key derived from the password.
    public var authKey: Base64Bytes
    /// The device's ID (its version-vector entry).
    public var device: DeviceID
    /// A name for device lists (1...128 bytes, no control characters).
    public var deviceName: String

    /// Creates a request.
    public init(account: String, authKey: Base64Bytes, device: DeviceID, deviceName: String) {
        self.account = account
        self.authKey = authKey
        self.device = device
        self.deviceName = deviceName
    }
}

/// The answer to ``SignInRequest``.
public struct SignInResponse: Hashable, Sendable, Codable {
    /// The device's bearer token (`Authorization: Bearer <token>`); shown once, stored hashed.
    public var token: String
    /// The device signed in.
    public var device: DeviceID
    /// The account's key material.
    public var keys: AccountKeyBundle

    /// Creates a response.
    public init(token: String, device: DeviceID, keys: AccountKeyBundle) {
        self.token = token
        self.device = device
        self.keys = keys
    }
}

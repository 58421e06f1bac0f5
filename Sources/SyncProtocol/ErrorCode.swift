/// The stable error codes of the API; clients branch on these, never on messages.
public enum ErrorCode {
    /// 400: the body is not the JSON the endpoint expects.
    public static let malformedRequest = "malformed_request"
    /// 400: a field is out of its allowed range (name, ID, vector, zone…).
    public static let invalidField = "invalid_field"
    /// 400: the KDF parameters of an account's keys are outside what clients accept (scrypt and
    /// KeychainCrypto's `KDFParameters` floors and limits).
    public static let unsupportedKDF = "unsupported_kdf"
    /// 413: the body, the batch or a blob is larger than allowed (oversized blobs are listed in
    /// `items`).
    public static let tooLarge = "too_large"
    /// 401: no valid bearer token.
    public static let unauthorized = "unauthorized"
    /// 401: account name or auth key wrong (one answer for both).
    public static let signInFailed = "sign_in_failed"
    /// 429: too many sign-in attempts; retry later.
    public static let rateLimited = "rate_limited"
    /// 409: an account with that name exists.
    public static let accountExists = "account_exists"
    /// 404: no such device, route or resource.
    public static let notFound = "not_found"
    /// 409: an account limit (items, bytes, devices, push connections) would be exceeded; for an
    /// upload, `items` lists the batch's items that would add to the account's usage.
    public static let quotaExceeded = "quota_exceeded"
    /// 409: an item of the batch would get too many concurrent versions; nothing was written.
    public static let tooManySiblings = "too_many_siblings"
    /// 409: a device log append named an index other than the log's length; read it and try again.
    public static let logConflict = "log_conflict"
    /// 409: a device of another member account uses this device ID in the shared group's zones.
    public static let deviceIDTaken = "device_id_taken"
    /// 403: the caller's account only reads the shared group (a viewer): its zones take no upload.
    public static let viewerCannotWrite = "viewer_cannot_write"
    /// 403: the device was revoked and can never sign in again; enrol it as a new device.
    public static let deviceRevoked = "device_revoked"
    /// 410: the cursor can no longer be served; reconcile in full (`resync=true`).
    public static let cursorExpired = "cursor_expired"
    /// 410: the server was restored from a backup older than the cursor: it lost changes the device
    /// has seen; reconcile in full (`resync=true`) and push again what the server no longer lists.
    public static let feedRestored = "feed_restored"
    /// 405: the route does not accept that method.
    public static let methodNotAllowed = "method_not_allowed"
    /// 415: the body is not `application/json`.
    public static let unsupportedMediaType = "unsupported_media_type"
    /// 426: `GET /v1/push` must be a WebSocket upgrade.
    public static let upgradeRequired = "upgrade_required"
    /// 403: the operator disabled the account (`sync-server admin disable`); nothing was deleted.
    public static let accountDisabled = "account_disabled"
    /// 503: the server cannot serve the request now (storage failure); retry later.
    public static let unavailable = "unavailable"
}

import SyncCore

/// The one error type of the sync server library: a stable code, a message safe to log and to send
/// to clients (never a token, blob, key or SQL argument), and the underlying error, if any.
package struct SyncServerError: Error, Sendable, CustomStringConvertible {
    /// A stable, machine-readable failure kind; new codes may be added.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        package let rawValue: String

        package init(_ rawValue: String) { self.rawValue = rawValue }

        package var description: String { rawValue }

        /// An account with that name exists already.
        package static let accountExists = Code("account_exists")
        /// The account, device or item asked for does not exist (in the caller's account).
        package static let notFound = Code("not_found")
        /// An account limit (items, devices) would be exceeded.
        package static let quotaExceeded = Code("quota_exceeded")
        /// The device's cursor is below the zone's horizon: it must reconcile in full first.
        package static let cursorExpired = Code("cursor_expired")
        /// An item would get more concurrent versions than allowed.
        package static let tooManySiblings = Code("too_many_siblings")
        /// The device was revoked: it can never sign in again.
        package static let deviceRevoked = Code("device_revoked")
        /// An append to the device log named an index other than the log's length.
        package static let logConflict = Code("log_conflict")
        /// A device of another member account uses the device ID in a shared group's zones.
        package static let deviceIDTaken = Code("device_id_taken")
        /// The database failed; the message says what was attempted, not with which values.
        package static let storageFailure = Code("storage_failure")
        /// Configuration or startup failed (certificate, data directory, address).
        package static let startupFailure = Code("startup_failure")
    }

    package var code: Code
    package var message: String
    package var underlying: (any Error)?
    /// The item IDs a refusal is about (`tooManySiblings`, `quotaExceeded`); empty otherwise.
    package var items: [ItemID]

    package init(_ code: Code, _ message: String, underlying: (any Error)? = nil, items: [ItemID] = []) {
        self.code = code
        self.message = message
        self.underlying = underlying
        self.items = items
    }

    package var description: String { "\(code): \(message)" }
}

extension SyncServerError {
    /// The answer to signing in again with a revoked device's ID.
    package static let revokedDevice = SyncServerError(.deviceRevoked, "this device was revoked; enrol it as a new device")
}

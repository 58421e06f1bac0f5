/// The one error type of SyncClient: a stable code, a one-line message for people, and the
/// underlying error. Messages never contain passwords, keys, tokens, item contents or blobs.
public struct SyncClientError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is; new codes may be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable name.
        public let rawValue: String

        /// The device is not enrolled (run `sync-client enroll`).
        public static let notEnrolled = Code(rawValue: "notEnrolled")
        /// The device is already enrolled.
        public static let alreadyEnrolled = Code(rawValue: "alreadyEnrolled")
        /// The account name or the password is wrong.
        public static let signInFailed = Code(rawValue: "signInFailed")
        /// The server's public key does not match the pin.
        public static let pinMismatch = Code(rawValue: "pinMismatch")
        /// The server cannot be reached or its answer cannot be read.
        public static let unreachable = Code(rawValue: "unreachable")
        /// The server answered with an error.
        public static let serverError = Code(rawValue: "serverError")
        /// The device's token was revoked or is no longer valid.
        public static let unauthorized = Code(rawValue: "unauthorized")
        /// The account's KDF parameters are below this client's floors or above its limits.
        public static let unsafeParameters = Code(rawValue: "unsafeParameters")
        /// The local keychain or the client's state failed.
        public static let localStorage = Code(rawValue: "localStorage")
        /// The keychain is locked, so synchronizable items cannot be read.
        public static let keychainLocked = Code(rawValue: "keychainLocked")
        /// Some pulled versions were rejected (they failed to open or went backwards).
        public static let rejectedVersions = Code(rawValue: "rejectedVersions")
        /// The device did not reach the server's state within the round limit.
        public static let notInStep = Code(rawValue: "notInStep")
        /// Another sync-client process holds this keychain's sync state.
        public static let busy = Code(rawValue: "busy")
        /// The server served account state (the device log) that contradicts what this device
        /// verified, or that it cannot verify; nothing was changed locally.
        public static let untrustedAccountState = Code(rawValue: "untrustedAccountState")
        /// A full resync did not list items this device has; they were kept and reported (decision 0106).
        public static let unlistedItems = Code(rawValue: "unlistedItems")
        /// An argument or input is invalid.
        public static let invalidInput = Code(rawValue: "invalidInput")

        public var description: String { rawValue }
    }

    /// The kind of failure.
    public let code: Code
    /// A one-line, secret-free explanation.
    public let message: String
    /// The error behind this one, if any.
    public let underlying: (any Error)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    public var description: String { message }

    /// The one way out of an enrolment that no longer works (a revoked device, a keychain without
    /// its account key or token, damaged keys), which every message that meets one names
    /// (decision 0269): the keychain is enrolled again, its own items kept.
    package static let enrolAgain = "`sync-client enroll --replace --server URL --account NAME` enrols this keychain again (its items stay)"
}

/// The one error type of KeychainCrypto.
///
/// Messages are coarse and never contain keys, passwords, plaintext or blobs. Every failure to open
/// or unwrap something (wrong key, tampered byte, wrong item, wrong context) has the same code and
/// message, so a caller cannot learn which check failed.
public struct CryptoError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is; new codes may be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable name.
        public let rawValue: String

        /// An authenticated value did not open or verify under the given key and context.
        public static let authenticationFailed = Code(rawValue: "authenticationFailed")
        /// KDF parameters are unknown, below the client's floors or above its limits.
        public static let unsupportedParameters = Code(rawValue: "unsupportedParameters")
        /// A printed recovery key is malformed or fails its checksum (for example a typo).
        public static let invalidRecoveryKey = Code(rawValue: "invalidRecoveryKey")
        /// An input has the wrong size or shape (before any secret is involved).
        public static let invalidInput = Code(rawValue: "invalidInput")
        /// A version opened, but the device log does not admit its writer (decision 0275): the
        /// message says why (revoked, not a member, unsigned under a revoked device's epoch).
        public static let writerNotAdmitted = Code(rawValue: "writerNotAdmitted")
        /// A version opened, but its signer is not in the device log this device verified (yet).
        public static let writerNotInTheLog = Code(rawValue: "writerNotInTheLog")
        /// The underlying crypto library failed.
        public static let internalFailure = Code(rawValue: "internalFailure")

        public var description: String { rawValue }
    }

    /// The kind of failure.
    public let code: Code
    /// A short, secret-free message.
    public let message: String
    /// The library error behind an ``Code/internalFailure``; never set for authentication failures.
    public let underlying: (any Error)?

    /// Creates an error.
    public init(code: Code, message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    public var description: String { "\(code): \(message)" }

    static let authenticationFailed = CryptoError(code: .authenticationFailed, message: "authentication failed")

    static func unsupportedParameters(_ message: String) -> CryptoError {
        CryptoError(code: .unsupportedParameters, message: message)
    }

    static func invalidInput(_ message: String) -> CryptoError {
        CryptoError(code: .invalidInput, message: message)
    }

    static func internalFailure(_ error: any Error) -> CryptoError {
        CryptoError(code: .internalFailure, message: "crypto library failure", underlying: error)
    }
}

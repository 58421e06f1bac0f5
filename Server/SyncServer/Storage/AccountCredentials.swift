/// What the server keeps to sign devices in and to hand back to them, all opaque to it: the
/// auth-key verifier (a slow salted hash of the auth key, `AuthKeyVerifier.encoded`), the KDF
/// parameters and salt the client derives its keys with, and the account key wrapped by the
/// client's wrapping key (and, optionally, by a recovery key).
package struct AccountCredentials: Sendable, Equatable {
    /// `AuthKeyVerifier.encoded`.
    package var verifier: [UInt8]
    /// The client's KDF parameters, as the canonical JSON bytes the client sent.
    package var kdfParameters: [UInt8]
    /// The client's KDF salt.
    package var salt: [UInt8]
    /// The account key wrapped by the password-derived wrapping key.
    package var wrappedAccountKey: [UInt8]
    /// The account key wrapped by the recovery key, when the user made one.
    package var wrappedRecoveryKey: [UInt8]?
    /// `AuthKeyVerifier.encoded` of the recovery key's auth key (decision 0132); nil for an account
    /// that cannot be recovered.
    package var recoveryVerifier: [UInt8]?

    package init(
        verifier: [UInt8], kdfParameters: [UInt8], salt: [UInt8],
        wrappedAccountKey: [UInt8], wrappedRecoveryKey: [UInt8]?, recoveryVerifier: [UInt8]? = nil
    ) {
        self.verifier = verifier
        self.kdfParameters = kdfParameters
        self.salt = salt
        self.wrappedAccountKey = wrappedAccountKey
        self.wrappedRecoveryKey = wrappedRecoveryKey
        self.recoveryVerifier = recoveryVerifier
    }

    /// Whether new devices need an enrolled device's approval (decision 0134): the account key has
    /// no password wrap.
    package var requiresApproval: Bool { wrappedAccountKey.isEmpty }

    /// New password credentials that keep what a password change must not touch: the recovery
    /// verifier, and — while approval is required — the absence of a password wrap.
    package func keeping(from current: AccountCredentials) -> AccountCredentials {
        var kept = self
        kept.recoveryVerifier = current.recoveryVerifier
        if current.requiresApproval { kept.wrappedAccountKey = [] }
        return kept
    }
}

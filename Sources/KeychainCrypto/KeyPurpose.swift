import Crypto

/// The HKDF-SHA256 info label of every key derived in the hierarchy: one label per purpose, each
/// carrying the format version, so no two purposes can ever share a key.
package enum KeyPurpose: String, CaseIterable, Sendable {
    /// From the scrypt master secret: the auth key sent to the server at sign-in.
    case auth = "synckeychain/v1/auth"
    /// From the scrypt master secret: the key that wraps the account key (never leaves the device).
    case wrap = "synckeychain/v1/wrap"
    /// From a recovery key: the key that wraps the account key for recovery.
    case recoveryWrap = "synckeychain/v1/recovery-wrap"
    /// From a recovery key: the recovery auth key the server verifies at recovery (0132), as it
    /// verifies the password's auth key; it opens nothing.
    case recoveryAuth = "synckeychain/v1/recovery-auth"
    /// From the account key: the HMAC key of item IDs.
    case itemID = "synckeychain/v1/item-id"
    /// From the account key: the AES-256-GCM key of item blobs.
    case itemBlob = "synckeychain/v1/item-blob"
    /// From the account key of an epoch: the HMAC key of the zone-state digest's terms (0120).
    case zoneState = "synckeychain/v1/zone-state"
    /// From the account key of an epoch: the HMAC key that binds password enrolments into the
    /// device log (0120).
    case deviceLog = "synckeychain/v1/device-log"
    /// From the account key of an epoch: the key that seals the previous epoch's account key in
    /// the epoch's device-log entry (decision 0176).
    case epochChain = "synckeychain/v1/epoch-chain"
    /// From a recovery key: the seed of its X-Wing key pair, whose public key the device log
    /// records at account creation so every epoch is sealed to it (decision 0178).
    case recoveryAgreement = "synckeychain/v1/recovery-agreement"
    /// From the account key of an epoch: the seed of the account identity's Ed25519 key, which
    /// signs for the account towards other accounts (decision 0282).
    case identitySigning = "synckeychain/v1/identity-signing"
    /// From the account key of an epoch: the seed of the account identity's X-Wing key, to which
    /// other accounts seal what they share with it (decision 0282).
    case identityAgreement = "synckeychain/v1/identity-agreement"
    /// From a group key of an epoch: the key that seals the previous epoch's group key in the
    /// membership log entry that starts the epoch (decision 0283).
    case groupChain = "synckeychain/v1/group-chain"

    /// Derives this purpose's 256-bit key from `inputKeyMaterial` (HKDF-SHA256, empty salt).
    package func derive(from inputKeyMaterial: SymmetricKey) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: inputKeyMaterial, info: Array(rawValue.utf8), outputByteCount: 32)
    }
}

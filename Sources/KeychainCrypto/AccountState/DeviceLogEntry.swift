import Crypto
import SyncCore

/// One entry of an account's device log (0120): a device added, a device revoked, or a new
/// account-key epoch. The server keeps the entries as opaque bytes; devices verify them.
///
/// Signed bytes: `len(label) ‖ label ‖ len(account) ‖ account ‖ index (8) ‖ previous (32) ‖
/// kind (1) ‖ len(subject) ‖ subject ‖ len(signing key) ‖ signing key ‖ len(agreement key) ‖
/// agreement key ‖ epoch (4) ‖ len(signer) ‖ signer`, then for `epoch` and `epochKeys` entries
/// only `‖ len(payload) ‖ payload` (an ``EpochKeyPayload``, decision 0176; for `vouch` entries
/// blob digests, decision 0281), label
/// `synckeychain/v1/device-log-entry`.
/// Wire form: the signed bytes ‖ len(signature) ‖ signature ‖ len(seal) ‖ seal, where the seal is
/// empty or the HMAC-SHA256 of the signed bytes under the epoch's ``DeviceLogKey``.
public struct DeviceLogEntry: Sendable, Equatable {
    /// What the entry records.
    public enum Kind: UInt8, Sendable {
        /// `subject` joins with `signingKey` (and `agreementKey`).
        case add = 1
        /// `subject` leaves; its signatures on later entries and statements are not accepted.
        case revoke = 2
        /// The account key moves to `epoch` (the signer made the new key).
        case epoch = 3
        /// More of `epoch`'s wraps, when they do not fit in one entry of the server's 64 KiB bound
        /// (decision 0176): by the signer of its `epoch` entry, or by any current member holding
        /// its key that completes them (decision 0200).
        case epochKeys = 4
        /// The recovery key's X-Wing public key (`agreementKey`), recorded by the account's first
        /// device right after its own entry: every later epoch is sealed to it (decision 0178).
        case recoveryKey = 5
        /// The signer answers for blobs the log would refuse once `subject` is revoked (a revoked
        /// device's earlier writes, decision 0281): `payload` is their SHA-256 digests, 32 bytes
        /// each. Appended by the revoking device before the revocation.
        case vouch = 6

        /// Whether entries of this kind carry a payload.
        var hasPayload: Bool { self == .epoch || self == .epochKeys || self == .vouch }
    }

    /// The account the log belongs to.
    public var account: String
    /// The entry's position in the log, from 0.
    public var index: UInt64
    /// The ``hash`` of the entry before it; zeros for the first.
    public var previous: [UInt8]
    /// What the entry records.
    public var kind: Kind
    /// The device added or revoked (the signer itself for an epoch entry).
    public var subject: DeviceID
    /// The subject's Ed25519 public key (32 bytes) for an `add`; empty otherwise.
    public var signingKey: [UInt8]
    /// The subject's key-agreement public key for an `add`, or empty.
    public var agreementKey: [UInt8]
    /// The account-key epoch the entry belongs to (the new one for an `epoch` entry).
    public var epoch: UInt32
    /// The device whose key signs the entry. For an `add` whose signer is its subject (the first
    /// device, a password enrolment), the entry must also carry the epoch's seal.
    public var signer: DeviceID
    /// An ``EpochKeyPayload`` for `epoch` and `epochKeys` entries; empty otherwise.
    public var payload: [UInt8]

    private static let label = "synckeychain/v1/device-log-entry"

    /// Creates an unsigned entry.
    public init(
        account: String, index: UInt64, previous: [UInt8], kind: Kind, subject: DeviceID, signingKey: [UInt8] = [],
        agreementKey: [UInt8] = [], epoch: UInt32, signer: DeviceID, payload: [UInt8] = []
    ) {
        self.account = account
        self.index = index
        self.previous = previous
        self.kind = kind
        self.subject = subject
        self.signingKey = signingKey
        self.agreementKey = agreementKey
        self.epoch = epoch
        self.signer = signer
        self.payload = payload
    }

    /// The bytes that are signed and sealed.
    public var signedBytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendLengthPrefixed(Self.label.utf8)
        bytes.appendLengthPrefixed(account.utf8)
        bytes.appendBigEndian(index)
        bytes.append(contentsOf: previous)
        bytes.append(kind.rawValue)
        bytes.appendLengthPrefixed(subject.rawValue.utf8)
        bytes.appendLengthPrefixed(signingKey)
        bytes.appendLengthPrefixed(agreementKey)
        bytes.appendBigEndian(epoch)
        bytes.appendLengthPrefixed(signer.rawValue.utf8)
        if kind.hasPayload { bytes.appendLengthPrefixed(payload) }
        return bytes
    }

    /// The wire form: signed by `key` (the signer's), and sealed by `logKey` when given.
    public func signed(with key: DeviceSigningKey, sealedWith logKey: DeviceLogKey? = nil) throws(CryptoError) -> [UInt8] {
        let bytes = signedBytes
        var wire = bytes
        wire.appendLengthPrefixed(try key.signature(for: bytes))
        wire.appendLengthPrefixed(logKey?.seal(bytes) ?? [])
        return wire
    }

    /// The SHA-256 of an entry's wire form: what the next entry names as previous.
    public static func hash(ofSigned wire: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: wire))
    }

    /// The entry of a wire form, unverified: for reading an epoch's keys before the log is
    /// verified (what they open is authenticated by the keys themselves); nil when malformed.
    public init?(unverifiedWire wire: [UInt8]) {
        guard let parsed = Self.parse(wire) else { return nil }
        self = parsed.entry
    }

    /// An entry read from its wire form, with its signature and seal, unverified.
    struct Parsed {
        var entry: DeviceLogEntry
        var signedBytes: [UInt8]
        var signature: [UInt8]
        var seal: [UInt8]
    }

    /// Reads the wire form; nil when it is malformed.
    static func parse(_ wire: [UInt8]) -> Parsed? {
        var reader = ByteReader(wire[...])
        guard let label = reader.readLengthPrefixed(), Array(label) == Array(Self.label.utf8),
            let account = reader.readLengthPrefixed().flatMap({ String(validating: $0, as: UTF8.self) }),
            let index = reader.readBigEndian(UInt64.self),
            let previous = reader.read(count: 32),
            let kind = reader.read(count: 1).flatMap({ Kind(rawValue: $0.first!) }),
            let subject = reader.readLengthPrefixed().flatMap({ String(validating: $0, as: UTF8.self) }).flatMap(DeviceID.init),
            let signingKey = reader.readLengthPrefixed(),
            let agreementKey = reader.readLengthPrefixed(),
            let epoch = reader.readBigEndian(UInt32.self),
            let signer = reader.readLengthPrefixed().flatMap({ String(validating: $0, as: UTF8.self) }).flatMap(DeviceID.init)
        else { return nil }
        var payload: [UInt8] = []
        if kind.hasPayload {
            guard let bytes = reader.readLengthPrefixed() else { return nil }
            payload = Array(bytes)
        }
        let signedCount = wire.count - reader.rest.count
        guard let signature = reader.readLengthPrefixed(), let seal = reader.readLengthPrefixed(), reader.isAtEnd else { return nil }
        let entry = DeviceLogEntry(
            account: account, index: index, previous: Array(previous), kind: kind, subject: subject,
            signingKey: Array(signingKey), agreementKey: Array(agreementKey), epoch: epoch, signer: signer, payload: payload)
        return Parsed(entry: entry, signedBytes: Array(wire.prefix(signedCount)), signature: Array(signature), seal: Array(seal))
    }
}

/// The key, derived from the account key of one epoch, that seals device-log entries made with
/// the account key rather than by a device already in the log (the first device, a password
/// enrolment). The server never has it; a revoked device has only older epochs' keys.
public struct DeviceLogKey: Sendable {
    private let key: SymmetricKey

    /// The log key of `accountKey`'s epoch.
    public init(accountKey: AccountKey) {
        key = KeyPurpose.deviceLog.derive(from: accountKey.key)
    }

    func seal(_ bytes: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: bytes, using: key))
    }

    func isValidSeal(_ seal: [UInt8], for bytes: [UInt8]) -> Bool {
        // HMAC's isValidAuthenticationCode compares in constant time.
        HMAC<SHA256>.isValidAuthenticationCode(seal, authenticating: bytes, using: key)
    }
}

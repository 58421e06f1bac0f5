import Crypto

/// Approval enrolment authenticated in both directions (approval protocol 2, docs/decisions/0271),
/// in the way of ZRTP's hash commitment and Matrix's short authentication string: the new device
/// commits to what it contributes (its device ID, identity keys and a fresh nonce) before it sees
/// what the approver contributes (its device ID, signing key and nonce), and reveals it only then.
/// Both devices show the code of the whole transcript; a party in the middle fixes its own
/// contribution on each side before it can know the other's nonce, so the two codes agree with
/// probability 2⁻⁴⁰ per attempt, whatever computing power it has.
public enum ApprovalProtocol {
    /// The version every message of this protocol carries. Version 1 (the code over the new
    /// device's keys only, decision 0130) authenticated only the new device; it is refused.
    public static let version = 2
    /// The length of each device's nonce.
    public static let nonceLength = 32

    static let commitmentLabel = "synckeychain/v2/approval-commitment"
    static let transcriptLabel = "synckeychain/v2/approval-transcript"
    static let codeLabel = "synckeychain/v2/approval-code"
    static let handOverLabel = "synckeychain/v2/approval-hand-over"
    static let accountKeyLabel = "synckeychain/v2/approval-account-key"
    static let statementsLabel = "synckeychain/v2/approval-statements"
}

/// What the new device contributes: its device ID, its public keys and its nonce.
public struct ApprovalRequesterPart: Sendable, Equatable {
    public var device: String
    /// The Ed25519 public key (32 bytes).
    public var signingKey: [UInt8]
    /// The X-Wing public key (1,216 bytes).
    public var agreementKey: [UInt8]
    public var nonce: [UInt8]

    /// A contribution.
    public init(device: String, signingKey: [UInt8], agreementKey: [UInt8], nonce: [UInt8]) {
        self.device = device
        self.signingKey = signingKey
        self.agreementKey = agreementKey
        self.nonce = nonce
    }

    /// The commitment the new device posts first: SHA-256 of `len(label) ‖ label ‖ len(account) ‖
    /// account ‖ len(device) ‖ device ‖ len(signing key) ‖ signing key ‖ len(agreement key) ‖
    /// agreement key ‖ len(nonce) ‖ nonce`, label `synckeychain/v2/approval-commitment`.
    public func commitment(account: String) -> [UInt8] {
        var message: [UInt8] = []
        message.appendLengthPrefixed(ApprovalProtocol.commitmentLabel.utf8)
        message.appendLengthPrefixed(account.utf8)
        message.appendLengthPrefixed(device.utf8)
        message.appendLengthPrefixed(signingKey)
        message.appendLengthPrefixed(agreementKey)
        message.appendLengthPrefixed(nonce)
        return Array(SHA256.hash(data: message))
    }

    /// Whether this contribution is the one `commitment` committed to, compared in constant time.
    public func isCommitted(by commitment: [UInt8], account: String) -> Bool {
        ConstantTime.equals(self.commitment(account: account), commitment)
    }
}

/// What the approving device contributes, after it saw the new device's commitment: its device
/// ID, its signing key (the key the new device then requires on the answer) and its nonce.
public struct ApprovalApproverPart: Sendable, Equatable {
    public var device: String
    /// The Ed25519 public key (32 bytes) of the approver's device identity.
    public var signingKey: [UInt8]
    public var nonce: [UInt8]

    /// A contribution.
    public init(device: String, signingKey: [UInt8], nonce: [UInt8]) {
        self.device = device
        self.signingKey = signingKey
        self.nonce = nonce
    }
}

/// Both contributions, in the order they were made; its hash is what the code shows and what the
/// approver's signature on the hand-over covers.
///
/// Hash: SHA-256 of `len(label) ‖ label ‖ len(account) ‖ account ‖ len(commitment) ‖ commitment ‖`
/// the new device's `len(device) ‖ device ‖ len(signing key) ‖ signing key ‖ len(agreement key) ‖
/// agreement key ‖ len(nonce) ‖ nonce ‖` and the approver's `len(device) ‖ device ‖ len(signing
/// key) ‖ signing key ‖ len(nonce) ‖ nonce`, label `synckeychain/v2/approval-transcript`.
public struct ApprovalTranscript: Sendable, Equatable {
    public let account: String
    public let requester: ApprovalRequesterPart
    public let approver: ApprovalApproverPart
    /// The transcript's SHA-256.
    public let hash: [UInt8]

    /// The transcript of `requester`'s contribution (committed to first) and `approver`'s.
    public init(account: String, requester: ApprovalRequesterPart, approver: ApprovalApproverPart) {
        self.account = account
        self.requester = requester
        self.approver = approver
        var message: [UInt8] = []
        message.appendLengthPrefixed(ApprovalProtocol.transcriptLabel.utf8)
        message.appendLengthPrefixed(account.utf8)
        message.appendLengthPrefixed(requester.commitment(account: account))
        message.appendLengthPrefixed(requester.device.utf8)
        message.appendLengthPrefixed(requester.signingKey)
        message.appendLengthPrefixed(requester.agreementKey)
        message.appendLengthPrefixed(requester.nonce)
        message.appendLengthPrefixed(approver.device.utf8)
        message.appendLengthPrefixed(approver.signingKey)
        message.appendLengthPrefixed(approver.nonce)
        hash = Array(SHA256.hash(data: message))
    }

    /// The code both devices show: HKDF-SHA256 of the transcript's hash (empty salt, info
    /// `synckeychain/v2/approval-code`), its first 40 bits.
    public var code: ApprovalCode {
        let derived = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: hash), info: Array(ApprovalProtocol.codeLabel.utf8), outputByteCount: 5)
        return ApprovalCode(bits: derived.withUnsafeBytes { Array($0) })
    }
}

/// What the approver signs with its device identity key as it answers: the transcript the user
/// confirmed, the device log it verified (length and head: the new device's `add` entry is in it),
/// a commitment to the account key it hands over, and a digest of the statements it hands over.
///
/// Signed bytes: `len(label) ‖ label ‖ len(transcript hash) ‖ transcript hash ‖ epoch (4) ‖ log
/// length (8) ‖ len(log head) ‖ log head ‖ len(key commitment) ‖ key commitment ‖ len(statements
/// digest) ‖ statements digest`, label `synckeychain/v2/approval-hand-over`.
public struct ApprovalHandOver: Sendable, Equatable {
    public var transcriptHash: [UInt8]
    public var epoch: UInt32
    public var logLength: UInt64
    public var logHead: [UInt8]
    public var accountKeyCommitment: [UInt8]
    public var statementsDigest: [UInt8]

    /// A hand-over.
    public init(
        transcriptHash: [UInt8], epoch: UInt32, logLength: UInt64, logHead: [UInt8], accountKeyCommitment: [UInt8], statementsDigest: [UInt8]
    ) {
        self.transcriptHash = transcriptHash
        self.epoch = epoch
        self.logLength = logLength
        self.logHead = logHead
        self.accountKeyCommitment = accountKeyCommitment
        self.statementsDigest = statementsDigest
    }

    /// The bytes the approver signs.
    public var signedBytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendLengthPrefixed(ApprovalProtocol.handOverLabel.utf8)
        bytes.appendLengthPrefixed(transcriptHash)
        bytes.appendBigEndian(epoch)
        bytes.appendBigEndian(logLength)
        bytes.appendLengthPrefixed(logHead)
        bytes.appendLengthPrefixed(accountKeyCommitment)
        bytes.appendLengthPrefixed(statementsDigest)
        return bytes
    }

    /// The approver's signature (64 bytes).
    public func signature(with key: DeviceSigningKey) throws(CryptoError) -> [UInt8] {
        try key.signature(for: signedBytes)
    }

    /// Whether `signature` is `signingKey`'s signature of this hand-over; false for a key that is
    /// not an Ed25519 public key.
    public func isSigned(_ signature: [UInt8], by signingKey: [UInt8]) -> Bool {
        guard let key = try? DevicePublicKey(rawRepresentation: signingKey) else { return false }
        return key.isValidSignature(signature, for: signedBytes)
    }

    /// The commitment to an account key: SHA-256 of `len(label) ‖ label ‖ len(account) ‖ account ‖
    /// epoch (4) ‖ len(key) ‖ key`, label `synckeychain/v2/approval-account-key`.
    public static func accountKeyCommitment(_ key: AccountKey, account: String, epoch: UInt32) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendLengthPrefixed(ApprovalProtocol.accountKeyLabel.utf8)
        bytes.appendLengthPrefixed(account.utf8)
        bytes.appendBigEndian(epoch)
        bytes.appendLengthPrefixed(key.rawRepresentation)
        return Array(SHA256.hash(data: bytes))
    }

    /// The digest of handed statements, in order: SHA-256 of `len(label) ‖ label` and, per
    /// statement, `len(zone) ‖ zone ‖ len(device) ‖ device ‖ len(statement) ‖ statement`, label
    /// `synckeychain/v2/approval-statements`.
    public static func statementsDigest(_ statements: [(zone: String, device: String, statement: [UInt8])]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendLengthPrefixed(ApprovalProtocol.statementsLabel.utf8)
        for handed in statements {
            bytes.appendLengthPrefixed(handed.zone.utf8)
            bytes.appendLengthPrefixed(handed.device.utf8)
            bytes.appendLengthPrefixed(handed.statement)
        }
        return Array(SHA256.hash(data: bytes))
    }
}

/// Comparisons whose time does not depend on where two byte strings differ.
package enum ConstantTime {
    /// Whether `a` and `b` are equal; the time depends only on their lengths.
    package static func equals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

import Crypto

/// One entry of a group's membership log (decision 0283): signed by the account identity (0282) of
/// a member allowed to make it. The server stores entries as opaque bytes; members' devices verify
/// them with ``GroupLog``.
///
/// Signed bytes: `len(label) ‖ label ‖ group (16) ‖ index (8) ‖ previous (32) ‖ kind (1) ‖
/// len(subject) ‖ subject ‖ len(subject card) ‖ subject card ‖ role (1, 0 for none) ‖ epoch (4) ‖
/// len(signer) ‖ signer ‖ signer's card fingerprint (32) ‖ len(payload) ‖ payload`, label
/// `synckeychain/v1/group-log-entry`. Wire form: the signed bytes ‖ len(signature) ‖ signature.
public struct GroupLogEntry: Sendable, Equatable {
    /// What the entry records.
    public enum Kind: UInt8, Sendable {
        /// The owner creates the group (index 0), epoch 1.
        case create = 1
        /// An owner or admin adds `subject` (its card in `subjectCard`) with `role`; the current key
        /// is sealed to it.
        case add = 2
        /// An owner or admin removes `subject`; a new epoch, sealed to the remaining members.
        case remove = 3
        /// `subject` leaves (it signs); the group is due a re-key.
        case leave = 4
        /// An owner or admin starts a new epoch, sealed to the current members.
        case rekey = 5
        /// The owner gives `subject` another `role`.
        case role = 6
        /// An owner or admin other than `subject` records `subject`'s new card (`subjectCard`):
        /// that account's identity moved to a new key epoch when it revoked a device. The group is
        /// then due a re-key, since its old identity's holders include the revoked device.
        case update = 7
        /// Part of what a coming `remove`, `leave` or `update` of `subject` answers for, when one
        /// entry cannot hold it (decision 0300): digests of blobs, in a ``GroupVouches`` payload,
        /// signed by the one who makes that departure, and taken only when it follows.
        case vouch = 8
    }

    /// What a member may do in the group.
    public enum Role: UInt8, Sendable, Comparable {
        case owner = 1, admin = 2, member = 3, viewer = 4

        public static func < (lhs: Role, rhs: Role) -> Bool { lhs.rawValue < rhs.rawValue }

        /// Whether the role may add, remove and re-key (owner, admin).
        public var manages: Bool { self <= .admin }
    }

    public var group: [UInt8]
    public var index: UInt64
    public var previous: [UInt8]
    public var kind: Kind
    /// The account the entry is about.
    public var subject: String
    /// The subject's ``AccountIdentityCard`` for `create`, `add` and `update`; empty otherwise.
    public var subjectCard: [UInt8]
    /// The subject's role for `create`, `add` and `role`; nil otherwise.
    public var role: Role?
    /// The group-key epoch after the entry.
    public var epoch: UInt32
    /// The account that signs the entry.
    public var signer: String
    /// The fingerprint of the card the signer signs with.
    public var signerFingerprint: [UInt8]
    /// A ``GroupKeyPayload`` for `create`, `add`, `remove` and `rekey`; a ``GroupVouches`` for
    /// `leave`, `update` (empty in entries made before decision 0297) and `vouch`; empty otherwise.
    public var payload: [UInt8]

    private static let label = "synckeychain/v1/group-log-entry"
    /// A group ID's length: 16 random bytes.
    public static let groupIDLength = 16

    public init(
        group: [UInt8], index: UInt64, previous: [UInt8], kind: Kind, subject: String, subjectCard: [UInt8] = [], role: Role? = nil,
        epoch: UInt32, signer: String, signerFingerprint: [UInt8], payload: [UInt8] = []
    ) {
        self.group = group
        self.index = index
        self.previous = previous
        self.kind = kind
        self.subject = subject
        self.subjectCard = subjectCard
        self.role = role
        self.epoch = epoch
        self.signer = signer
        self.signerFingerprint = signerFingerprint
        self.payload = payload
    }

    var signedBytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendLengthPrefixed(Self.label.utf8)
        bytes.append(contentsOf: group)
        bytes.appendBigEndian(index)
        bytes.append(contentsOf: previous)
        bytes.append(kind.rawValue)
        bytes.appendLengthPrefixed(subject.utf8)
        bytes.appendLengthPrefixed(subjectCard)
        bytes.append(role?.rawValue ?? 0)
        bytes.appendBigEndian(epoch)
        bytes.appendLengthPrefixed(signer.utf8)
        bytes.append(contentsOf: signerFingerprint)
        bytes.appendLengthPrefixed(payload)
        return bytes
    }

    /// The entry's wire form, signed by `identity` (whose account must be `signer`).
    public func signed(by identity: AccountIdentity) throws(CryptoError) -> [UInt8] {
        guard identity.account == signer else { throw .invalidInput("a group log entry is signed by its signer's identity") }
        var wire = signedBytes
        wire.appendLengthPrefixed(try identity.signature(for: signedBytes))
        return wire
    }

    /// The hash the next entry's `previous` names: SHA-256 of the wire form.
    public static func hash(ofSigned wire: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: wire)) }

    /// The entry `wire` holds, unverified: what a device reads of a log before it knows which
    /// card verifies it (the owner named by the `create`, then checked against its pinned card).
    public init?(unverifiedWire wire: [UInt8]) {
        guard let decoded = try? Self.decode(wire) else { return nil }
        self = decoded.entry
    }

    /// Reads a wire form: the entry, the bytes its signature covers, and the signature.
    static func decode(_ wire: [UInt8]) throws(CryptoError) -> (entry: GroupLogEntry, signed: [UInt8], signature: [UInt8]) {
        var reader = ByteReader(wire[...])
        guard let label = reader.readLengthPrefixed(), Array(label) == Array(Self.label.utf8),
            let group = reader.read(count: groupIDLength), let index = reader.readBigEndian(UInt64.self),
            let previous = reader.read(count: 32), let kindByte = reader.read(count: 1).map({ $0[$0.startIndex] }),
            let kind = Kind(rawValue: kindByte), let subject = reader.readLengthPrefixed(), let card = reader.readLengthPrefixed(),
            let roleByte = reader.read(count: 1).map({ $0[$0.startIndex] }), roleByte == 0 || Role(rawValue: roleByte) != nil,
            let epoch = reader.readBigEndian(UInt32.self), let signer = reader.readLengthPrefixed(),
            let fingerprint = reader.read(count: 32), let payload = reader.readLengthPrefixed()
        else { throw .invalidInput("a group log entry is malformed") }
        let signedLength = wire.count - reader.rest.count
        guard let signature = reader.readLengthPrefixed(), signature.count == 64, reader.isAtEnd,
            let subjectName = String(validating: subject, as: UTF8.self), let signerName = String(validating: signer, as: UTF8.self)
        else { throw .invalidInput("a group log entry is malformed") }
        let entry = GroupLogEntry(
            group: Array(group), index: index, previous: Array(previous), kind: kind, subject: subjectName, subjectCard: Array(card),
            role: Role(rawValue: roleByte), epoch: epoch, signer: signerName, signerFingerprint: Array(fingerprint), payload: Array(payload))
        return (entry, Array(wire.prefix(signedLength)), Array(signature))
    }
}

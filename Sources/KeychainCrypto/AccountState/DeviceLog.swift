import SyncCore

/// An account's device log as one device has verified it (0120): who is in the account, with
/// which keys, in which epoch — the device's own view, not the server's say.
///
/// Entries are appended one at a time and each is checked against everything before it:
/// - its index and previous hash continue the log;
/// - an `add` is signed by a current member, or signed by its own subject and sealed with the log
///   key of the current epoch (the first entry always is: it starts the log and its epoch);
/// - a `revoke` is signed by a current member and names a current member;
/// - an `epoch` entry is signed by a current member and moves the epoch up by exactly one; an
///   `epochKeys` entry (more of its wraps) is signed by a current member, in the same epoch: the
///   epoch's signer, or any device holding its key that completes an interrupted set (0200).
/// A member revoked before an entry cannot sign it.
public struct DeviceLog: Sendable {
    /// A device the log admits.
    public struct Member: Sendable, Equatable {
        /// The device's Ed25519 public key.
        public var signingKey: DevicePublicKey
        /// The device's key-agreement public key, or empty.
        public var agreementKey: [UInt8]
        /// The epoch the device joined in.
        public var addedIn: UInt32
        /// Whether a later entry revoked it.
        public var isRevoked: Bool { revokedIn != nil }
        /// The epoch of the entry that revoked it (the last one whose key it may hold); nil while
        /// it is a member.
        public var revokedIn: UInt32?
        /// Whether it signed its own revocation (a keychain enrolled again retires the ID it had,
        /// decision 0241; no new epoch follows): what it wrote before stays its own (0275).
        public var retiredItself = false

        /// Whether another device revoked it: nothing it signed is taken any more (decision 0275).
        public var isRevokedByAnother: Bool { isRevoked && !retiredItself }
    }

    /// Every device the log has admitted, revoked ones included.
    public private(set) var members: [DeviceID: Member] = [:]
    /// The current account-key epoch; nil for an empty log.
    public private(set) var epoch: UInt32?
    /// The wire form of every entry, in order.
    public private(set) var entries: [[UInt8]] = []
    /// The hash of the newest entry (zeros for an empty log).
    public private(set) var head: [UInt8] = ZoneStatement.none
    /// The account the log belongs to.
    public let account: String
    /// The recovery key's X-Wing public key, when the log records one (accounts created since
    /// decision 0178): epochs are sealed to it under the recipient name ``recoveryRecipient``.
    public private(set) var recoveryKey: [UInt8]?
    /// The name epochs seal the recovery key's wrap under: outside the device-ID alphabet, so no
    /// device can be named so.
    public static let recoveryRecipient = "recovery:"
    /// The position of the newest `revoke` entry and of the newest `epoch` entry.
    public private(set) var lastRevocation: Int?
    public private(set) var lastEpochChange: Int?
    /// The latest epoch a device revoked by another may hold the key of: an unsigned blob of it or
    /// of an earlier one may be that device's (decision 0275); nil while no device was revoked so.
    public private(set) var lastRevokedEpoch: UInt32?
    /// The devices that answer for each blob (by its SHA-256 digest) in a `vouch` entry: a blob
    /// the log would refuse as a revoked device's is taken while one of them is not revoked by
    /// another (decision 0281).
    public private(set) var vouchers: [[UInt8]: Set<DeviceID>] = [:]

    /// Whether a device was revoked after the newest epoch began: the revoking device (or any
    /// current one) must start a new epoch (decision 0176).
    public var needsNewEpoch: Bool {
        guard let lastRevocation else { return false }
        return lastRevocation > (lastEpochChange ?? -1)
    }

    /// An empty log of `account`.
    public init(account: String) {
        self.account = account
    }

    /// The members that are not revoked.
    public var currentMembers: [DeviceID: Member] { members.filter { !$0.value.isRevoked } }

    /// Verifies `wire` as the next entry and appends it.
    ///
    /// - Parameter logKeys: the log key of every epoch this device has the account key of.
    /// - Throws: ``CryptoError`` ``CryptoError/Code/authenticationFailed`` when the entry does not
    ///   continue this log or is not authentic, never saying which check failed.
    public mutating func append(_ wire: [UInt8], logKeys: [UInt32: DeviceLogKey]) throws(CryptoError) {
        guard let parsed = DeviceLogEntry.parse(wire), isAcceptable(parsed, logKeys: logKeys) else {
            throw .authenticationFailed
        }
        let entry = parsed.entry
        switch entry.kind {
        case .add:
            // isAcceptable checked the key parses.
            let key = try DevicePublicKey(rawRepresentation: entry.signingKey)
            members[entry.subject] = Member(signingKey: key, agreementKey: entry.agreementKey, addedIn: entry.epoch)
            if epoch == nil { epoch = entry.epoch }
        case .revoke:
            members[entry.subject]?.revokedIn = entry.epoch
            members[entry.subject]?.retiredItself = entry.signer == entry.subject
            if entry.signer != entry.subject { lastRevokedEpoch = max(lastRevokedEpoch ?? 0, entry.epoch) }
        case .epoch:
            epoch = entry.epoch
        case .epochKeys:
            break
        case .recoveryKey:
            recoveryKey = entry.agreementKey
        case .vouch:
            for start in stride(from: 0, to: entry.payload.count, by: Self.vouchDigestSize) {
                vouchers[Array(entry.payload[start..<start + Self.vouchDigestSize]), default: []].insert(entry.signer)
            }
        }
        if entry.kind == .revoke { lastRevocation = entries.count }
        if entry.kind == .epoch { lastEpochChange = entries.count }
        entries.append(wire)
        head = DeviceLogEntry.hash(ofSigned: wire)
    }

    /// Whether `served` (a log as the server now gives it) extends this verified log: every entry
    /// this device verified is there, unchanged, in order. False means the server rolled the log
    /// back or forked it.
    public func isExtended(by served: [[UInt8]]) -> Bool {
        served.count >= entries.count && zip(entries, served).allSatisfy { $0 == $1 }
    }

    private func isAcceptable(_ parsed: DeviceLogEntry.Parsed, logKeys: [UInt32: DeviceLogKey]) -> Bool {
        let entry = parsed.entry
        guard entry.account == account, entry.index == UInt64(entries.count), entry.previous == head else { return false }
        let current = currentMembers
        switch entry.kind {
        case .add:
            guard members[entry.subject] == nil, let subjectKey = try? DevicePublicKey(rawRepresentation: entry.signingKey) else {
                return false
            }
            if entry.signer == entry.subject {
                // Self-signed: proof of possession plus the seal of the current epoch's log key.
                guard entry.epoch == (epoch ?? entry.epoch), let logKey = logKeys[entry.epoch],
                    logKey.isValidSeal(parsed.seal, for: parsed.signedBytes)
                else { return false }
                return subjectKey.isValidSignature(parsed.signature, for: parsed.signedBytes)
            }
            guard entry.epoch == epoch, let signer = current[entry.signer] else { return false }
            return signer.signingKey.isValidSignature(parsed.signature, for: parsed.signedBytes)
        case .revoke:
            guard let epoch, entry.epoch == epoch, current[entry.subject] != nil, let signer = current[entry.signer] else {
                return false
            }
            return entry.signingKey.isEmpty && signer.signingKey.isValidSignature(parsed.signature, for: parsed.signedBytes)
        case .epoch:
            guard let epoch, entry.epoch == epoch + 1, entry.subject == entry.signer, let signer = current[entry.signer] else {
                return false
            }
            return entry.signingKey.isEmpty && entry.agreementKey.isEmpty
                && signer.signingKey.isValidSignature(parsed.signature, for: parsed.signedBytes)
        case .recoveryKey:
            // Only the first device, right after its own entry: a later device recording a key
            // of its own choosing would be sealed every later epoch, even after its revocation.
            guard entries.count == 1, let epoch, entry.epoch == epoch, entry.subject == entry.signer,
                let signer = current[entry.signer], signer.addedIn == epoch, entry.signingKey.isEmpty, !entry.agreementKey.isEmpty
            else { return false }
            return signer.signingKey.isValidSignature(parsed.signature, for: parsed.signedBytes)
        case .epochKeys:
            // Any current member (decision 0200): a wrap it makes of a key that is not the epoch's
            // does not chain to the previous key (DeviceLogExchange refuses it), and a current
            // member can already do worse (revoke the recipient).
            guard let epoch, lastEpochChange != nil, entry.epoch == epoch, entry.subject == entry.signer,
                let signer = current[entry.signer]
            else { return false }
            return entry.signingKey.isEmpty && entry.agreementKey.isEmpty
                && signer.signingKey.isValidSignature(parsed.signature, for: parsed.signedBytes)
        case .vouch:
            // A current member, for another current member, before revoking it (decision 0281).
            guard let epoch, entry.epoch == epoch, entry.subject != entry.signer, current[entry.subject] != nil,
                let signer = current[entry.signer], !entry.payload.isEmpty, entry.payload.count % Self.vouchDigestSize == 0
            else { return false }
            return entry.signingKey.isEmpty && entry.agreementKey.isEmpty
                && signer.signingKey.isValidSignature(parsed.signature, for: parsed.signedBytes)
        }
    }
}

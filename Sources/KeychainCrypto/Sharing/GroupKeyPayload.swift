import Crypto
import Foundation

/// A group key of one epoch (256 bits): what a group's items are sealed under (decision 0283).
public struct GroupKey: Sendable {
    let key: SymmetricKey

    /// A new random key.
    public static func generate() -> GroupKey { GroupKey(key: SymmetricKey(size: .bits256)) }

    init(key: SymmetricKey) { self.key = key }

    /// Whether `other` holds the same key (constant time).
    public func isSameKey(as other: GroupKey) -> Bool { ConstantTime.equals(key.bytes, other.key.bytes) }
}

extension AccountKeys {
    /// A shared group's keys by epoch, used as an account's keys are for its zones (decision 0291):
    /// versions sealed under the newest, opened under the epoch a blob names, item IDs under epoch
    /// 1's, so every member's devices compute the same IDs.
    ///
    /// - Throws: ``CryptoError`` ``CryptoError/Code/invalidInput`` without the key of epoch 1.
    public init(groupKeys: [UInt32: GroupKey]) throws(CryptoError) {
        try self.init(epochs: groupKeys.mapValues { AccountKey(key: $0.key) })
    }
}

/// What the entries that hand out a group key carry (decision 0283): the epoch's key sealed with
/// HPKE (X-Wing) to each recipient account's identity key, info binding the group, the account and
/// the epoch, and — when the entry starts an epoch after the first — the previous epoch's key
/// sealed under the new one, so a holder of the newest key reads every older item.
///
/// Wire form: `count (4) ‖ (len(account) ‖ account ‖ len(wrap) ‖ wrap)… ‖ len(previous) ‖ previous`.
struct GroupKeyPayload: Equatable {
    struct Wrap: Equatable {
        var account: String
        var wrap: [UInt8]
    }

    var wraps: [Wrap]
    var previous: [UInt8]
    /// In a `remove`: the digests (``DeviceLog/vouchDigest(of:)``) of the removed member's blobs
    /// the remover answers for (decision 0293). Absent from the wire when empty, so every payload
    /// made before reads the same.
    var vouched: [[UInt8]] = []

    private static let label = "synckeychain/v1/group-key"

    static func sealing(
        _ key: GroupKey, epoch: UInt32, group: [UInt8], to recipients: [AccountIdentityCard], previousKey: GroupKey?
    ) throws(CryptoError) -> GroupKeyPayload {
        var wraps: [Wrap] = []
        for card in recipients {
            let wire = try AgreementWrap.seal(key.key.bytes, to: card.agreementKey, info: info(group: group, account: card.account, epoch: epoch))
            wraps.append(Wrap(account: card.account, wrap: wire))
        }
        var previous: [UInt8] = []
        if let previousKey {
            previous = try KeyWrap.seal(
                previousKey.key, under: KeyPurpose.groupChain.derive(from: key.key), associatedData: chainData(group: group, epoch: epoch - 1))
        }
        return GroupKeyPayload(wraps: wraps, previous: previous)
    }

    /// The key sealed to `identity`'s account in this payload of `epoch`.
    func key(for identity: AccountIdentity, group: [UInt8], epoch: UInt32) throws(CryptoError) -> GroupKey? {
        guard let wrap = wraps.first(where: { $0.account == identity.account }) else { return nil }
        let bytes = try AgreementWrap.open(wrap.wrap, with: identity.agreement, info: Self.info(group: group, account: identity.account, epoch: epoch))
        guard bytes.count == 32 else { throw .authenticationFailed }
        return GroupKey(key: SymmetricKey(data: bytes))
    }

    /// The previous epoch's key, opened with this epoch's.
    func previousKey(under key: GroupKey, group: [UInt8], epoch: UInt32) throws(CryptoError) -> GroupKey {
        GroupKey(key: try KeyWrap.open(previous, under: KeyPurpose.groupChain.derive(from: key.key), associatedData: Self.chainData(group: group, epoch: epoch - 1)))
    }

    var encoded: [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendBigEndian(UInt32(wraps.count))
        for wrap in wraps {
            bytes.appendLengthPrefixed(wrap.account.utf8)
            bytes.appendLengthPrefixed(wrap.wrap)
        }
        bytes.appendLengthPrefixed(previous)
        if !vouched.isEmpty {
            bytes.appendBigEndian(UInt32(vouched.count))
            for digest in vouched { bytes += digest }
        }
        return bytes
    }

    init(wraps: [Wrap], previous: [UInt8], vouched: [[UInt8]] = []) {
        self.wraps = wraps
        self.previous = previous
        self.vouched = vouched
    }

    init(decoding bytes: [UInt8]) throws(CryptoError) {
        var reader = ByteReader(bytes[...])
        guard let count = reader.readBigEndian(UInt32.self), count <= 10_000 else { throw .invalidInput("a group key payload is malformed") }
        var wraps: [Wrap] = []
        for _ in 0..<count {
            guard let account = reader.readLengthPrefixed(), let name = String(validating: account, as: UTF8.self),
                let wrap = reader.readLengthPrefixed()
            else { throw .invalidInput("a group key payload is malformed") }
            wraps.append(Wrap(account: name, wrap: Array(wrap)))
        }
        guard let previous = reader.readLengthPrefixed() else { throw .invalidInput("a group key payload is malformed") }
        var vouched: [[UInt8]] = []
        if !reader.isAtEnd {
            let size = DeviceLog.vouchDigestSize
            guard let count = reader.readBigEndian(UInt32.self), count >= 1, count <= 10_000 else { throw .invalidInput("a group key payload is malformed") }
            for _ in 0..<count {
                guard let digest = reader.read(count: size) else { throw .invalidInput("a group key payload is malformed") }
                vouched.append(Array(digest))
            }
        }
        guard reader.isAtEnd else { throw .invalidInput("a group key payload is malformed") }
        self.init(wraps: wraps, previous: Array(previous), vouched: vouched)
    }

    private static func info(group: [UInt8], account: String, epoch: UInt32) -> Data {
        var info: [UInt8] = []
        info.appendLengthPrefixed(label.utf8)
        info.appendLengthPrefixed(group)
        info.appendLengthPrefixed(account.utf8)
        info.appendBigEndian(epoch)
        return Data(info)
    }

    private static func chainData(group: [UInt8], epoch: UInt32) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendLengthPrefixed("synckeychain/v1/group-chain".utf8)
        bytes.appendLengthPrefixed(group)
        bytes.appendBigEndian(epoch)
        return bytes
    }
}

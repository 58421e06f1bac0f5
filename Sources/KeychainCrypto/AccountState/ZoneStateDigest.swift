import Crypto
import SyncCore

/// A digest of a zone's state as the server holds it at one feed position: every stored version's
/// item ID, version vector and deleted flag (docs/decisions/0120).
///
/// It is a keyed multiset hash: the sum modulo 2^256 of one HMAC-SHA256 term per version, under a
/// key derived from the account key of the epoch. Adding or removing a version costs one HMAC, so
/// a device keeps the digest of a 10,000-item zone up to date as it applies pages. The key matters:
/// an unkeyed additive hash falls to Wagner's generalised birthday attack, and the server, which
/// would be the attacker, cannot compute terms without it.
///
/// Term: `HMAC-SHA256(key, len(zone) ‖ zone ‖ len(item ID) ‖ item ID ‖ len(vector) ‖ canonical
/// vector ‖ deleted (1))`, lengths 4-byte big-endian; the sum is kept as a 32-byte big-endian number.
public struct ZoneStateDigest: Sendable, Hashable, CustomStringConvertible {
    /// The digest's 32 bytes, big-endian.
    public private(set) var bytes: [UInt8]

    /// The digest of an empty zone (all zeros).
    public init() {
        bytes = [UInt8](repeating: 0, count: 32)
    }

    /// A digest read back from its bytes; nil unless there are exactly 32.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
    }

    /// Adds one stored version.
    public mutating func insert(_ term: Term) {
        var carry: UInt16 = 0
        for index in stride(from: 31, through: 0, by: -1) {
            let sum = UInt16(bytes[index]) + UInt16(term.bytes[index]) + carry
            bytes[index] = UInt8(truncatingIfNeeded: sum)
            carry = sum >> 8
        }
    }

    /// Removes one stored version that was inserted before.
    public mutating func remove(_ term: Term) {
        var borrow: Int16 = 0
        for index in stride(from: 31, through: 0, by: -1) {
            var difference = Int16(bytes[index]) - Int16(term.bytes[index]) - borrow
            borrow = difference < 0 ? 1 : 0
            if difference < 0 { difference += 256 }
            bytes[index] = UInt8(difference)
        }
    }

    /// Whether two digests are equal, compared in constant time.
    public func matches(_ other: ZoneStateDigest) -> Bool {
        zip(bytes, other.bytes).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    public var description: String { "ZoneStateDigest(\(bytes.hexString.prefix(16))…)" }

    /// One version's contribution to the digest.
    public struct Term: Sendable {
        let bytes: [UInt8]
    }

    /// Computes terms under the zone-state key of one account-key epoch.
    public struct Hasher: Sendable {
        private let key: SymmetricKey

        /// The hasher of `accountKey`'s epoch.
        public init(accountKey: AccountKey) {
            key = KeyPurpose.zoneState.derive(from: accountKey.key)
        }

        /// The term of one stored version of `item` in `zone`.
        public func term(zone: String, item: ItemID, vector: VersionVector, isDeleted: Bool) -> Term {
            var message: [UInt8] = []
            message.appendLengthPrefixed(zone.utf8)
            message.appendLengthPrefixed(item.rawValue.utf8)
            message.appendLengthPrefixed(vector.canonicalEncoding)
            message.append(isDeleted ? 1 : 0)
            return Term(bytes: Array(HMAC<SHA256>.authenticationCode(for: message, using: key)))
        }

        /// The digest of a whole state: every stored version of every item.
        public func digest(zone: String, versions: some Sequence<(item: ItemID, vector: VersionVector, isDeleted: Bool)>) -> ZoneStateDigest {
            var digest = ZoneStateDigest()
            for version in versions {
                digest.insert(term(zone: zone, item: version.item, vector: version.vector, isDeleted: version.isDeleted))
            }
            return digest
        }
    }
}

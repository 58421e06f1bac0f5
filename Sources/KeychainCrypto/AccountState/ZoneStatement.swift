import Crypto
import SyncCore

/// A device's signed statement of the zone state it verified at one feed position (0120): what
/// lets other devices detect a server that forks, rolls back or hides part of the account.
///
/// Signed bytes: `len(label) ‖ label ‖ len(account) ‖ account ‖ len(zone) ‖ zone ‖ len(device) ‖
/// device ‖ epoch (4) ‖ number (8) ‖ previous (32) ‖ position (8) ‖ digest (32) ‖ log head (32)`,
/// label `synckeychain/v1/zone-statement`, integers big-endian, then, for a statement with an
/// ``Extent`` (decision 0180), `1 ‖ made at (8, milliseconds) ‖ len(frontier) ‖ canonical frontier
/// ‖ len(live frontier) ‖ canonical live frontier`, and, for one that names statements it fell
/// short of (decision 0287), `2 ‖ count (2) ‖ (len(device) ‖ device ‖ number (8))…`. The wire form
/// is those bytes followed by the 64-byte Ed25519 signature.
public struct ZoneStatement: Sendable, Equatable {
    /// The account the statement is about.
    public var account: String
    /// The zone.
    public var zone: String
    /// The device that signed it.
    public var device: DeviceID
    /// The account-key epoch whose zone-state key made ``digest``.
    public var epoch: UInt32
    /// The device's statement counter for this zone, from 1; each statement is one more.
    public var number: UInt64
    /// The hash (``hash``) of the device's previous statement for the zone; zeros for the first.
    public var previous: [UInt8]
    /// The account's feed position the state is at (the cursor of a pull that ended in step).
    public var position: UInt64
    /// The zone's state at ``position``.
    public var digest: ZoneStateDigest
    /// The hash of the newest device-log entry the device had verified.
    public var logHead: [UInt8]
    /// Which writes the state holds, and when the device stated it (decision 0180); nil in a
    /// statement of the 0120 form.
    public var extent: Extent?
    /// The other devices' statements whose writes the server did not serve this device, also
    /// after it read the whole feed again (decision 0287): each device named gives back what the
    /// server no longer holds. Only in a statement with an ``extent``.
    public var fellShortOf: [Reference]

    /// A device's statement, by its number.
    public struct Reference: Sendable, Equatable {
        /// The device that made it.
        public var device: DeviceID
        /// Its number.
        public var number: UInt64

        /// Creates a reference.
        public init(device: DeviceID, number: UInt64) {
            self.device = device
            self.number = number
        }
    }

    /// Which writes a stated state holds: what lets another device compare its own state with it
    /// whatever feed positions the server gave either (decision 0180).
    public struct Extent: Sendable, Equatable {
        /// When the device made the statement, by its clock (milliseconds since 1970).
        public var madeAt: Int64
        /// The join of the vectors of every version the device holds, deletions included.
        public var frontier: VersionVector
        /// The join of the vectors of the live (not deleted) versions only.
        public var liveFrontier: VersionVector

        /// Creates an extent.
        public init(madeAt: Int64, frontier: VersionVector, liveFrontier: VersionVector) {
            self.madeAt = madeAt
            self.frontier = frontier
            self.liveFrontier = liveFrontier
        }
    }

    private static let label = "synckeychain/v1/zone-statement"
    /// The hash of "no previous statement" and of an empty device log.
    public static let none = [UInt8](repeating: 0, count: 32)

    /// Creates an unsigned statement.
    public init(
        account: String, zone: String, device: DeviceID, epoch: UInt32, number: UInt64, previous: [UInt8],
        position: UInt64, digest: ZoneStateDigest, logHead: [UInt8], extent: Extent? = nil, fellShortOf: [Reference] = []
    ) {
        self.account = account
        self.zone = zone
        self.device = device
        self.epoch = epoch
        self.number = number
        self.previous = previous
        self.position = position
        self.digest = digest
        self.logHead = logHead
        self.extent = extent
        self.fellShortOf = extent == nil ? [] : fellShortOf
    }

    /// The bytes that are signed.
    public var signedBytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendLengthPrefixed(Self.label.utf8)
        bytes.appendLengthPrefixed(account.utf8)
        bytes.appendLengthPrefixed(zone.utf8)
        bytes.appendLengthPrefixed(device.rawValue.utf8)
        bytes.appendBigEndian(epoch)
        bytes.appendBigEndian(number)
        bytes.append(contentsOf: previous)
        bytes.appendBigEndian(position)
        bytes.append(contentsOf: digest.bytes)
        bytes.append(contentsOf: logHead)
        if let extent {
            bytes.append(1)
            bytes.appendBigEndian(extent.madeAt)
            bytes.appendLengthPrefixed(extent.frontier.canonicalEncoding)
            bytes.appendLengthPrefixed(extent.liveFrontier.canonicalEncoding)
            if !fellShortOf.isEmpty {
                // A count's two bytes bound the names (a statement is at most 4 KiB anyway).
                let named = fellShortOf.prefix(Int(UInt16.max))
                bytes.append(2)
                bytes.appendBigEndian(UInt16(named.count))
                for reference in named {
                    bytes.appendLengthPrefixed(reference.device.rawValue.utf8)
                    bytes.appendBigEndian(reference.number)
                }
            }
        }
        return bytes
    }

    /// The wire form: the signed bytes and `key`'s signature of them.
    public func signed(with key: DeviceSigningKey) throws(CryptoError) -> [UInt8] {
        let bytes = signedBytes
        return bytes + (try key.signature(for: bytes))
    }

    /// Whether the statement is `device`'s about `zone` of `account`: a verified signature says
    /// who signed, this what the signer spoke of.
    public func isAbout(account: String, zone: String, by device: DeviceID) -> Bool {
        self.account == account && self.zone == zone && self.device == device
    }

    /// Reads a statement's wire form and checks its signature against `publicKey`.
    ///
    /// - Throws: ``CryptoError`` ``CryptoError/Code/authenticationFailed`` for a malformed statement
    ///   or a bad signature, never saying which.
    public init(verifying wire: [UInt8], publicKey: DevicePublicKey) throws(CryptoError) {
        guard wire.count > 64 else { throw .authenticationFailed }
        guard publicKey.isValidSignature(wire.suffix(64), for: Array(wire.dropLast(64))) else { throw .authenticationFailed }
        try self.init(readingVerified: wire)
    }

    /// Reads the wire form of a statement whose signature was verified before, without checking
    /// it again: only for the exact bytes a device recorded once it verified them (decision 0244).
    ///
    /// - Throws: ``CryptoError`` ``CryptoError/Code/authenticationFailed`` for a malformed statement.
    public init(readingVerified wire: [UInt8]) throws(CryptoError) {
        guard wire.count > 64 else { throw .authenticationFailed }
        var reader = ByteReader(wire.dropLast(64))
        guard let label = reader.readLengthPrefixed(), Array(label) == Array(Self.label.utf8),
            let account = reader.readLengthPrefixed().flatMap({ String(validating: $0, as: UTF8.self) }),
            let zone = reader.readLengthPrefixed().flatMap({ String(validating: $0, as: UTF8.self) }),
            let device = reader.readLengthPrefixed().flatMap({ String(validating: $0, as: UTF8.self) }).flatMap(DeviceID.init),
            let epoch = reader.readBigEndian(UInt32.self),
            let number = reader.readBigEndian(UInt64.self),
            let previous = reader.read(count: 32),
            let position = reader.readBigEndian(UInt64.self),
            let digest = reader.read(count: 32).flatMap({ ZoneStateDigest(bytes: Array($0)) }),
            let logHead = reader.read(count: 32)
        else { throw .authenticationFailed }
        var extent: Extent?
        var fellShortOf: [Reference] = []
        if !reader.isAtEnd {
            guard reader.read(count: 1)?.first == 1, let madeAt = reader.readBigEndian(Int64.self),
                let frontier = reader.readLengthPrefixed().flatMap({ try? VersionVector(canonicalEncoding: $0) }),
                let live = reader.readLengthPrefixed().flatMap({ try? VersionVector(canonicalEncoding: $0) })
            else { throw .authenticationFailed }
            extent = Extent(madeAt: madeAt, frontier: frontier, liveFrontier: live)
            if !reader.isAtEnd {
                guard reader.read(count: 1)?.first == 2, let count = reader.readBigEndian(UInt16.self), count > 0 else { throw .authenticationFailed }
                for _ in 0..<count {
                    guard let device = reader.readLengthPrefixed().flatMap({ String(validating: $0, as: UTF8.self) }).flatMap(DeviceID.init),
                        let number = reader.readBigEndian(UInt64.self)
                    else { throw .authenticationFailed }
                    fellShortOf.append(Reference(device: device, number: number))
                }
            }
            guard reader.isAtEnd else { throw .authenticationFailed }
        }
        self.init(
            account: account, zone: zone, device: device, epoch: epoch, number: number, previous: Array(previous),
            position: position, digest: digest, logHead: Array(logHead), extent: extent, fellShortOf: fellShortOf)
    }

    /// The SHA-256 of a statement's wire form: what the device's next statement names as previous.
    public static func hash(ofSigned wire: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: wire))
    }
}

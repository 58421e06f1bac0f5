import SyncCore

/// What a device in step with the server holds of a zone (decision 0180): which writes (the joins
/// of the vectors of every version and of the live ones) and the digest of the live versions.
/// Feed positions play no part: the server chooses them and could shift one device's numbering.
public struct ZoneStateView: Sendable, Equatable {
    /// The join of the vectors of every version held, deletions included.
    public var frontier: VersionVector
    /// The join of the vectors of the live versions.
    public var liveFrontier: VersionVector
    /// The keyed digest of the live versions (deletions are left out, so collecting tombstones
    /// does not change it).
    public var digest: ZoneStateDigest

    /// Creates a view.
    public init(frontier: VersionVector, liveFrontier: VersionVector, digest: ZoneStateDigest) {
        self.frontier = frontier
        self.liveFrontier = liveFrontier
        self.digest = digest
    }

    /// The view of a state: every version the server holds of every item, as the device knows them.
    public init(
        zone: String, hasher: ZoneStateDigest.Hasher,
        versions: some Sequence<(item: ItemID, vector: VersionVector, isDeleted: Bool)>
    ) {
        var frontier = VersionVector()
        var live = VersionVector()
        var digest = ZoneStateDigest()
        for version in versions {
            frontier.join(version.vector)
            guard !version.isDeleted else { continue }
            live.join(version.vector)
            digest.insert(hasher.term(zone: zone, item: version.item, vector: version.vector, isDeleted: false))
        }
        self.init(frontier: frontier, liveFrontier: live, digest: digest)
    }

    /// Whether a statement of this view would say the same as `statement`.
    public func isStated(by statement: ZoneStatement) -> Bool {
        guard let extent = statement.extent else { return false }
        return extent.frontier == frontier && extent.liveFrontier == liveFrontier && digest.matches(statement.digest)
    }
}

/// Something a device found wrong in what the server serves about a zone (decision 0180).
public enum ZoneStatementFinding: Sendable, Equatable {
    /// The device's state lacks writes that `device` stated it held before this device's pull:
    /// the server withheld them from this device, or showed it a different history.
    case withheld(DeviceID)
    /// The device's state holds exactly the writes `device` stated, but different versions: the
    /// server hid or changed items for one of the two.
    case diverged(DeviceID)
    /// The server served a statement of `device` older than one this device verified.
    case rolledBack(DeviceID)
    /// The server served a statement of `device` that does not continue the one this device
    /// verified (two statements with one number, or a broken chain).
    case forked(DeviceID)

    /// One line for the user.
    public var explanation: String {
        switch self {
        case .withheld(let device):
            "device \(device.rawValue.prefix(12)) stated writes the server did not serve here (hidden items or a forked history)"
        case .diverged(let device):
            "the server served a state that differs from the one device \(device.rawValue.prefix(12)) stated for the same writes (hidden items or a forked history)"
        case .rolledBack(let device):
            "the server served an older statement of device \(device.rawValue.prefix(12)) than this device verified"
        case .forked(let device):
            "the server served a statement of device \(device.rawValue.prefix(12)) that does not continue the one this device verified (a forked history)"
        }
    }
}

/// The rules by which a device checks other devices' statements (decision 0180); pure.
public enum ZoneStatementCheck {
    /// How long (milliseconds) a statement counts for the "withheld" check by default: the
    /// server's default device inactivity limit (30 days). A device that stated it holds a write
    /// stops holding the write's tombstone back once it has been silent that long, so an older
    /// statement may name a write whose only trace was a tombstone since collected. A device that
    /// keeps syncing publishes its statement before it acknowledges (decision 0203), so its latest
    /// statement never names a write whose tombstone it let the server collect.
    public static let freshness: Int64 = 30 * 24 * 3600 * 1000

    /// How far ahead of the checking device's `now` a statement may be stamped and still count as
    /// made now (milliseconds): both read the server's clock from the `Date` of its answers, to
    /// the second and late by an answer's latency (decision 0239).
    public static let clockTolerance: Int64 = 60_000

    /// The one number and hash of a device's statement this device verified last.
    public struct Verified: Sendable, Equatable {
        /// The statement's number.
        public var number: UInt64
        /// The hash of its wire form.
        public var hash: [UInt8]

        /// Creates a record.
        public init(number: UInt64, hash: [UInt8]) {
            self.number = number
            self.hash = hash
        }
    }

    /// Whether `statement` (hashing to `hash`) may follow `verified`, the device's statement this
    /// device verified last: a lower number is a rollback; the same number with other bytes, or
    /// the next number not naming it as previous, is a fork. A number further on is accepted (the
    /// server keeps only the latest statement, so the ones between are gone).
    public static func continuation(
        of verified: Verified?, by statement: ZoneStatement, hash: [UInt8]
    ) -> ZoneStatementFinding? {
        guard let verified else { return nil }
        if statement.number < verified.number { return .rolledBack(statement.device) }
        if statement.number == verified.number { return hash == verified.hash ? nil : .forked(statement.device) }
        if statement.number == verified.number + 1, statement.previous != verified.hash { return .forked(statement.device) }
        return nil
    }

    /// Compares `mine`, this device's state after a pull that ended in step, with `theirs`, a
    /// current member's statement verified before that pull began, at `now` (milliseconds, the
    /// server's clock as this device tells it, as `madeAt` is: decision 0239).
    ///
    /// - Every write live in `theirs` must be in `mine` (a later state holds the write or a
    ///   version descending from it), and so must every deletion in it that `excused` (the
    ///   writes stated before this device last read the whole feed, whose tombstones a collection
    ///   may have taken before then) does not cover: a tombstone made since is served to this
    ///   device before any collection can pass it. Unless `theirs` is older than `freshness` (the
    ///   server's device inactivity limit), or made more than ``clockTolerance`` ahead of `now`
    ///   (stamped on a clock ahead of the one this device reads: how old it is cannot be told,
    ///   decision 0203).
    /// - When both hold exactly the same writes, the live versions must be the same, within the
    ///   same age: a statement older than `freshness` may describe items whose tombstones were
    ///   collected since, and two devices back past the horizon took each other's old statement
    ///   for a fork in every round until someone wrote to the account.
    public static func compare(
        _ mine: ZoneStateView, with theirs: ZoneStatement, excusing excused: VersionVector = VersionVector(), now: Int64,
        freshness: Int64 = freshness
    ) -> ZoneStatementFinding? {
        guard let extent = theirs.extent, (-clockTolerance...freshness).contains(now - extent.madeAt) else { return nil }
        if !mine.frontier.descends(from: extent.liveFrontier) || !mine.frontier.joined(with: excused).descends(from: extent.frontier) {
            return .withheld(theirs.device)
        }
        if mine.frontier == extent.frontier, !mine.digest.matches(theirs.digest) {
            return .diverged(theirs.device)
        }
        return nil
    }
}

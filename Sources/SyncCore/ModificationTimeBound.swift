/// How a device stamps its local changes when its clock may be wrong (B7, decision 0108).
///
/// The later modification time wins a conflict between concurrent updates, so a device whose
/// clock runs a year ahead would win every one for a year. The writing device bounds its own
/// stamps against the server's clock (one clock for the whole account): when its clock is off by
/// more than ``window``, its changes are translated to the server's time; in any case no stamp is
/// later than the server's time plus ``window``. So no device wins a concurrent conflict by more
/// than ``window`` over a write made later by a device with a right clock.
public struct ModificationTimeBound: Hashable, Sendable {
    /// The most a stamp may lead the server's clock, milliseconds.
    public static let window: Int64 = 60_000

    /// This device's clock now, milliseconds since 1970.
    public var localNow: Int64
    /// The server's clock now as far as this device can tell, milliseconds since 1970.
    public var serverNow: Int64
    /// The server's time when this device last took every local change there was, if known: a
    /// change taken now was made after it. A stamp translated below it (the device's clock jumped
    /// ahead since the change was made, so the lead read now is not the lead it was made with) is
    /// raised to it, less ``window``.
    public var changesTakenBefore: Int64?

    /// A bound from a reading of both clocks taken at the same moment.
    public init(localNow: Int64, serverNow: Int64) {
        self.localNow = localNow
        self.serverNow = serverNow
    }

    /// How far this device's clock is ahead of the server's (negative: behind).
    public var lead: Int64 { localNow - serverNow }

    /// The stamp of a local change made at `modifiedAt` on this device's clock: moved to the
    /// server's time when the clock is off by more than ``window``, never later than the server's
    /// time plus ``window``, and never earlier than ``changesTakenBefore`` less ``window``. A
    /// change made before a jump of the device's clock is stamped between the last take and now,
    /// not a year off. A change stamped later than this device's clock now, while the clock is
    /// behind, was made before the clock went back: the lead read now is not the one it was made
    /// with, and it keeps its stamp (moved forward by the lead it would be stamped about now, and
    /// win every conflict with a later write).
    public func bounded(_ modifiedAt: Int64) -> Int64 {
        let madeBeforeTheClockWentBack = lead < -Self.window && modifiedAt > localNow
        let translated = abs(lead) > Self.window && !madeBeforeTheClockWentBack ? modifiedAt &- lead : modifiedAt
        let latest = serverNow &+ Self.window
        let earliest = changesTakenBefore.map { min($0 &- Self.window, serverNow) } ?? .min
        return max(earliest, min(translated, latest))
    }
}

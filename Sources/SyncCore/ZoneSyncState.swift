/// What a device durably keeps to sync one zone; the driver commits it with the local keychain.
/// Everything else in ``ZoneSyncMachine`` is lost on a crash, by design.
public struct ZoneSyncState: Hashable, Sendable {
    /// What the device keeps per synchronizable item.
    public struct Record: Hashable, Sendable {
        /// The local version: the keychain's value (or a deletion) and its vector.
        public var version: ItemVersion
        /// Whether the local version changed since the baseline and still has to be pushed.
        public var isPending: Bool
        /// The vectors of the item's versions the server last acknowledged or sent; empty when
        /// the server has never acknowledged a version of it.
        public var baseline: [VersionVector]
        /// Those of ``baseline`` that are deletions, as the server sent or acknowledged them: what
        /// every device in step knows alike of the server's versions (the digest of decision 0180
        /// is computed from them, decision 0203).
        public var deletedBaseline: [VersionVector]
        /// The join of every version of the item this device has seen.
        public var seen: VersionVector
        /// Why the pending version was set aside instead of pushed (the server refused it, or the
        /// device knows it would); nil for every other record. Cleared when the item changes.
        public var refusal: ItemRefusal?
        /// The highest sequence number at which the server said it holds the item: the one it gave
        /// a write of this device, or listed the item at; 0 when none is known. An honest server
        /// never lists the item lower again (decision 0188).
        public var sequence: UInt64
        /// Whether the server may hold the pending version though it never acknowledged it: it was
        /// pushed in a batch whose answer was lost, and the batch's resend came after the server
        /// had forgotten the batch (decision 0233). Cleared when the item changes.
        public var mayBeOnServer: Bool

        /// Creates a record.
        public init(
            version: ItemVersion, isPending: Bool, baseline: [VersionVector], seen: VersionVector, refusal: ItemRefusal? = nil,
            sequence: UInt64 = 0, deletedBaseline: [VersionVector] = [], mayBeOnServer: Bool = false
        ) {
            self.mayBeOnServer = mayBeOnServer
            self.version = version
            self.isPending = isPending
            self.baseline = baseline
            self.deletedBaseline = deletedBaseline
            self.seen = seen
            self.refusal = refusal
            self.sequence = sequence
        }

        /// Takes `versions`, the item's versions the server acknowledged or sent, as the baseline:
        /// their vectors, and which of them are deletions (the two always set together).
        public mutating func setBaseline(_ versions: [ItemVersion]) {
            baseline = versions.map(\.vector)
            deletedBaseline = versions.filter(\.isDeleted).map(\.vector)
        }

        /// Whether the version is waiting to be pushed: pending and not set aside.
        public var awaitsPush: Bool { isPending && refusal == nil }
    }

    /// This device.
    public var device: DeviceID
    /// The zone.
    public var zone: ZoneID
    /// The feed position applied so far.
    public var cursor: UInt64 = 0
    /// The device's last write number in this zone (its own vector entries never exceed it).
    public var writeCounter: UInt64 = 0
    /// The number the next batch gets.
    public var nextBatchID: UInt64 = 1
    /// The batch sent and not yet answered; resent unchanged after a restart.
    public var unansweredBatch: PushBatch<ItemVersion>?
    /// How many times the machine was restored; makes request IDs unique across restarts.
    public var epoch: UInt64 = 0
    /// The highest latest sequence number of the account the server reported to this device (a
    /// committed push's answer, a pull's last page); 0 when none. An honest server's feed never
    /// ends below it again (decision 0188).
    public var latestSequence: UInt64 = 0
    /// Per synchronizable item the device knows.
    public var records: [ItemID: Record] = [:]

    /// The state of a device that never synced the zone.
    public init(device: DeviceID, zone: ZoneID) {
        self.device = device
        self.zone = zone
    }
}

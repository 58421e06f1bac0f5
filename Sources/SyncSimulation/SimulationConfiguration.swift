import SyncCore

/// One simulation run's parameters. Everything random derives from ``seed``.
public struct SimulationConfiguration: Sendable {
    /// The seed of the run.
    public var seed: UInt64
    /// Random steps before the faults heal (user writes, syncs, faults, time passing).
    public var operations: Int
    /// Devices in the account (2...5); `nil` draws it from the seed.
    public var devices: Int?
    /// The zones: the keychain and a key-value store, synced by the same machinery.
    public var zones: [ZoneID]
    /// Distinct items per zone, few so that devices often write the same item.
    public var itemsPerZone: Int
    /// Percent of messages lost.
    public var dropPercent: Int
    /// Percent of messages delivered twice.
    public var duplicatePercent: Int
    /// Percent of page applications after which the device dies before its state commit (B4).
    public var crashBetweenCommitsPercent: Int
    /// The longest message delay, in milliseconds (random delays also reorder messages).
    public var maximumDelay: Int
    /// The server's inactivity limit, in milliseconds; long absences last longer.
    public var inactivityLimit: Int64
    /// Pull page size (small, so paging is exercised).
    public var pageSize: Int
    /// After how long without an answer a device retries, in milliseconds.
    public var retryAfter: Int64
    /// When set (`zone/item`), the run prints every event touching that item.
    public var traceItem: String?
    /// The server's merge rule: only tests break it.
    package var mergeRule: ServerModel.MergeRule
    /// Local changes written over the state's version only, not the keychain's (the B4 bug):
    /// only tests set it.
    package var ignoresAppliedVersions = false

    /// A run with the defaults.
    public init(seed: UInt64, operations: Int = 200, devices: Int? = nil) {
        self.seed = seed
        self.operations = operations
        self.devices = devices
        self.zones = [.keychain, ZoneID("kv.preferences")]
        self.itemsPerZone = 8
        self.dropPercent = 5
        self.duplicatePercent = 5
        self.crashBetweenCommitsPercent = 3
        self.maximumDelay = 300
        self.inactivityLimit = 60_000
        self.pageSize = 3
        self.retryAfter = 1_000
        self.mergeRule = .versionVectors
    }

    /// The number of devices this run uses.
    public var deviceCount: Int {
        if let devices { return devices }
        var generator = SplitMix64(seed: seed ^ 0x5EED_DE71_CE00_0000)
        return generator.number(in: 2...5)
    }
}

/// Counts of what a run exercised, so a green run can be told from one that tested nothing.
public struct SimulationStatistics: Sendable, Equatable {
    /// Synchronizable writes (updates and deletions) made by users.
    public var writes = 0
    /// Writes of items that must never leave their device.
    public var localOnlyWrites = 0
    /// Batches the server committed.
    public var committedBatches = 0
    /// Versions the server kept beside a concurrent sibling.
    public var conflictsKept = 0
    /// Of ``writes``, those to a key-value store's zone (`kv.*`): a key set or removed.
    public var keyValueWrites = 0
    /// Of ``conflictsKept``, those in a key-value store's zone: concurrent sets of one key.
    public var keyValueConflicts = 0
    /// Losing versions devices put in their history.
    public var historyEntries = 0
    /// "Cursor expired" answers to pulls and pushes, each starting a full resync.
    public var expiredCursors = 0
    /// Local copies a resync did not list, kept and reported (absence is not deletion).
    public var unlistedKept = 0
    /// Tombstones the server purged.
    public var purgedTombstones = 0
    /// Device crashes (restarts from durable state).
    public var deviceCrashes = 0
    /// Device crashes after the keychain took a page's effects and before the state was committed.
    public var crashesBetweenCommits = 0
    /// Server crashes and outages (a request in progress committed or not, its answer lost).
    public var serverCrashes = 0

    /// Adds another run's counts.
    public mutating func add(_ other: SimulationStatistics) {
        writes += other.writes
        localOnlyWrites += other.localOnlyWrites
        committedBatches += other.committedBatches
        conflictsKept += other.conflictsKept
        keyValueWrites += other.keyValueWrites
        keyValueConflicts += other.keyValueConflicts
        historyEntries += other.historyEntries
        expiredCursors += other.expiredCursors
        unlistedKept += other.unlistedKept
        purgedTombstones += other.purgedTombstones
        deviceCrashes += other.deviceCrashes
        crashesBetweenCommits += other.crashesBetweenCommits
        serverCrashes += other.serverCrashes
    }
}

import SyncCore

/// The local side of a zone that ``ZoneDriver`` syncs: the keychain (``KeychainZone``), a
/// key-value store (``KeyValueZone``) or the directory of stores (``StoreDirectory``). Each keeps
/// one contract (decisions 0054, 0107, 0170):
///
/// - local writes are journaled, and handed to the machine from a position the driver commits;
/// - the machine's effects are applied in one local transaction, committed before the machine's
///   state; the transaction applies nothing when an item it touches was written locally after
///   the position the machine decided from (the race: the driver starts the round again from its
///   committed state, taking the local write first);
/// - the local side records, in that transaction, which version it took, so after a crash
///   between the two commits the driver learns which items the local side holds ahead of the
///   state.
package protocol ZoneLocalStore: Sendable {
    /// Feeds the machine the local changes after `position` (a page of them), their times bounded
    /// by `timeBound` (decision 0108). A store whose zone has no sync state at all hands over
    /// every item it holds first (decision 0106).
    /// - Returns: The position reached and the items whose records the changes may have changed,
    ///   or `nil` when there was nothing new.
    mutating func takeLocalChanges(
        after position: Int64, into machine: inout ZoneSyncMachine, timeBound: ModificationTimeBound
    ) throws -> LocalChanges?

    /// Whether there are local changes after `position` that `state` does not have yet.
    func hasLocalChanges(after position: Int64, state: ZoneSyncState) throws -> Bool

    /// Whether the store took versions from a server before, under any sync state: a store
    /// that returns without its state may hold copies of items deleted meanwhile (decision 0175).
    func hasSyncedBefore() throws -> Bool

    /// The items whose local value `state` may not show: the local side took a version in an
    /// apply whose state commit did not follow (decision 0107).
    /// - Parameter appliesCovered: What ``coveredApplies(by:)`` said when `state` was committed:
    ///   while the store has made no apply since, none of this enrolment's can be ahead, and the
    ///   store need not read what each left (decision 0279).
    mutating func itemsAhead(of state: ZoneSyncState, position: Int64, appliesCovered: Int64?) throws -> Set<ItemID>

    /// Whether the store can tell, without the state's records, that it holds nothing ahead of a
    /// state committed with `appliesCovered`: ``itemsAhead(of:position:appliesCovered:)`` would
    /// find none, and leaves what it leaves then. A driver whose state has nothing waiting then
    /// loads no record until a round needs them (issue 35). False when the store cannot tell.
    mutating func holdsNothingAhead(appliesCovered: Int64?) throws -> Bool

    /// Of the items the last ``itemsAhead(of:position:appliesCovered:)`` found, the versions the
    /// store knows it took from a server: an honest server never lists an older one again
    /// (decision 0236).
    var appliedAhead: [ItemID: [VersionVector]] { get }

    /// Of the items whose pending version in the state the last
    /// ``itemsAhead(of:position:appliesCovered:)`` was given, those the store recorded as sent or
    /// pushed since that state was committed: a batch goes out before the state naming it is
    /// committed (R32), so such a version may be on the server though the state never says it
    /// was sent (R27).
    var sentAhead: Set<ItemID> { get }

    /// The store's count of applies, when `state` holds every version they left (each item found
    /// ahead of it since has been caught up); recorded with the state's commit (decision 0279).
    /// Nil when the store keeps no count, or `state` is still behind.
    mutating func coveredApplies(by state: ZoneSyncState) throws -> Int64?

    /// Whether a pulled live version's (opened) content is the item `item` names; the store may
    /// keep what it decoded for the apply that follows.
    mutating func accepts(_ content: [UInt8], for item: ItemID) -> Bool

    /// Which pulled versions' (opened) contents must wait because the store cannot write them
    /// now (a "when unlocked" keychain item while the keychain is locked), read once for a page
    /// or a round. The driver holds such an item, sealed, until the store can (decision 0137).
    func unlockWait() -> UnlockWait

    /// The class layer of the state file's copies of this store's items (decision 0237); nil when
    /// no lock takes an item away.
    var stateClassLayer: StateClassLayer? { get }

    /// Applies the machine's effects in one transaction, unless an item they touch was written
    /// locally after `apply.position`: then nothing is applied.
    mutating func apply(_ apply: LocalApply) throws -> LocalApplyOutcome
}

extension ZoneLocalStore {
    /// A store that cannot tell without the records: the driver loads them.
    package mutating func holdsNothingAhead(appliesCovered: Int64?) throws -> Bool { false }

    /// A store without protection classes (the key-value stores, the directory) can always write.
    package func unlockWait() -> UnlockWait { .never }

    package var stateClassLayer: StateClassLayer? { nil }

    /// A store that records no sent version (the directory of stores) finds none.
    package var sentAhead: Set<ItemID> { [] }
}

/// Whether a pulled version's content must wait for the unlock, as a store answered it for one
/// page or round (``ZoneLocalStore/unlockWait()``).
package struct UnlockWait: Sendable {
    private let waits: @Sendable (_ content: [UInt8], _ item: ItemID) -> Bool

    package init(_ waits: @escaping @Sendable (_ content: [UInt8], _ item: ItemID) -> Bool) {
        self.waits = waits
    }

    package func callAsFunction(_ content: [UInt8], for item: ItemID) -> Bool { waits(content, item) }

    /// Nothing waits.
    package static let never = UnlockWait { _, _ in false }
}

/// What ``ZoneLocalStore/takeLocalChanges(after:into:timeBound:)`` took.
package struct LocalChanges: Sendable {
    /// The local change position reached.
    package var position: Int64
    /// The items whose records the changes may have changed.
    package var items: [ItemID]

    package init(position: Int64, items: [ItemID]) {
        self.position = position
        self.items = items
    }
}

/// What the machine decided for the local side since the driver's last commit.
package struct LocalApply: Sendable {
    /// What to do to a local item.
    package enum Effect: Sendable, Equatable {
        /// Show this version (its value replaces the local one).
        case store(ItemID, ItemVersion)
        /// The item was deleted: remove the local copy.
        case remove(ItemID)
        /// Keep this losing version in the item's history, where a store has one.
        case keepInHistory(ItemID, ItemVersion)
        /// The server took this version, pushed from here: the local value is that version
        /// unless it was written locally after the position (a store may record so, decision 0175).
        case pushed(ItemID, ItemVersion)
        /// This version, the local value, is about to be pushed (sent, or sent again): a store may
        /// record it, so a device back without its sync state pushes it again as that version
        /// (decision 0247).
        case sent(ItemID, ItemVersion)
        /// A local write the machine took, on a device that has synced the zone: its value was
        /// written over `overwritten` (all the device had seen of the item). A store may record
        /// it, so that a copy taken again without sync state still overwrites what the user
        /// overwrote (decision 0234).
        case writtenOver(ItemID, VersionVector)
    }

    package var effects: [Effect]
    /// The machine's state the effects lead to, committed right after them.
    package var state: ZoneSyncState
    /// The state committed before: what the local side showed before these effects.
    package var committed: ZoneSyncState
    /// The local change position the machine decided from.
    package var position: Int64
    /// Whether the zone is syncing for the first time (the events a store publishes say so).
    package var isInitialSync: Bool

    /// Whether `version`, stored for `item`, is exactly a version the server holds: one the
    /// machine's record has in its baseline. A version the machine made (a conflict's resolution
    /// waiting to be pushed, two equal values' joined vector) is not (decisions 0242, 0243).
    package func isServersVersion(_ version: ItemVersion, of item: ItemID) -> Bool {
        state.records[item]?.baseline.contains(version.vector) == true
    }

    /// The join of the server's versions the value stored for `item` was decided from (the
    /// machine's record's baseline), nil when it holds none: an honest server never lists the
    /// item older than it again (R35). Not a version the machine made: a conflict's resolution
    /// waiting to be pushed holds this device's next counter, which the server may never get
    /// (decisions 0242, 0243).
    package func serversVersions(of item: ItemID) -> VersionVector? {
        guard let baseline = state.records[item]?.baseline, !baseline.isEmpty else { return nil }
        return .join(baseline)
    }
}

/// How an apply ended.
package enum LocalApplyOutcome: Sendable, Equatable {
    /// Applied; `problems` names items that could not be (each a problem in `status`).
    case applied(problems: [ItemID: String])
    /// Nothing was applied: these items were written locally after the position.
    case changedLocally(count: Int)
}

extension ZoneLocalStore {
    package var appliedAhead: [ItemID: [VersionVector]] { [:] }

    /// A store that keeps no count: every start reads what its applies left.
    package func coveredApplies(by state: ZoneSyncState) throws -> Int64? { nil }
}

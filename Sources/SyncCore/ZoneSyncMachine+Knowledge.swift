extension ZoneSyncMachine {
    /// What this process learned of the server beyond the durable state (docs/sync-rules.md §3):
    /// not saved; a new process, or a round restarted from the committed state, learns it again.
    public struct ServerKnowledge: Sendable, Equatable {
        /// Set while a full resync gives back what the server no longer lists: after a restore it
        /// announced (R58, decision 0154) or a lost own statement (R59). Lost on a crash: the
        /// restarted pull from the old cursor is answered the same way.
        var givingBack = false
        /// Values given back because only a loss explained their absence (R24, decision 0248),
        /// until the server answers for them.
        var givenBack: Set<ItemID> = []
        /// Of those, the ones the server answered it held already (`stale`): it hides them rather
        /// than lost them, and they are not given back again.
        var heldButUnlisted: Set<ItemID> = []
        /// The machine refused a page as older than what the server already told it (R34,
        /// decision 0188) and nothing was taken since: the answer to the resent pull is taken even
        /// if it is as old, since the server insists on that state.
        var refusedAnOldPage = false
        /// The most versions per batch since the server refused a batch as too large without
        /// naming an item (R26, decision 0224): halved at each such refusal.
        var batchSizeLimit: Int?
        /// The batch this machine made and has sent once only, if the outstanding one is such
        /// (R27): its answer tells whether the server stored it. A batch sent again (a retry, or
        /// one restored from the durable state) may have been stored by an earlier send whose
        /// answer was lost.
        var sentOnce: UInt64?
        /// The position below the lowest sequence at which a pull listed an item the local store
        /// holds ahead and the state does not hold, older than the store took it (R35): the
        /// cursor stops there, so the next pull lists the item again. Lost on a crash with the
        /// round (the pull is asked again from the cursor committed before it).
        var readAgainFrom: UInt64?
    }

    /// What the driver tells the machine of the local store, at each start or round: not saved.
    public struct LocalStoreKnowledge: Sendable, Equatable {
        /// Items whose local value may not be the state's: the local store took a version the
        /// state was not committed with (a crash between the two commits, R56, decision 0107).
        /// Their next pulled version is applied to the store even when the state holds the same
        /// value.
        public internal(set) var valueUnknown: Set<ItemID> = []
        /// The versions the local store took from the server for items the state does not show
        /// them for (``ZoneSyncMachine/markLocalValueUnknown(_:applied:)``, decision 0236).
        var appliedBefore: [ItemID: [VersionVector]] = [:]
        /// A device without sync state whose local store has synced before (a lost state file, a
        /// re-enrolment, R51): its copies may be of items deleted meanwhile (decision 0175).
        public var returnsWithoutState = false
        /// Pending versions the driver cannot hand over now (a "when unlocked" keychain item while
        /// the keychain is locked, R31, decision 0237): not pushed and not counted as pending.
        public var waitingForUnlock: Set<ItemID> = []
    }
}

import SyncCore

/// The state file's copies of "when unlocked" items while the keychain is locked (decision 0237):
/// they are sealed under their class, so a driver started while locked loads them still sealed.
/// Such an item waits: its arrivals are held (``waitsForUnlock(_:_:_:)``), its pending version is
/// not pushed, and the first round after the unlock loads the state again, opened. A pending
/// version of such an item written before the lock waits as well, since the copy its batch needs
/// cannot be sealed.
extension ZoneDriver {
    /// Whether every class a lock takes away can be sealed now (the keychain is unlocked).
    func canSealEveryClass() -> Bool {
        guard let layer = sealer.classLayer else { return true }
        guard let unavailable = try? layer.keychain.unavailableProtectionClasses() else { return false }
        return !unavailable.contains(where: \.isLockedWithKeychain)
    }

    /// After the unlock, loads the committed state again with the copies that were loaded sealed
    /// now opened, and starts from it as a restart would.
    func openSealedAwayCopies() throws {
        guard hasSealedAway, canSealEveryClass() else { return }
        try reloadCommitted()
        logger.info("sync state opened after the unlock", metadata: ["zone": "\(zone)"])
    }

    /// Makes the key pair held arrivals are sealed to, once, while unlocked (decision 0238): an
    /// arrival held before it exists stays sealed under the account key only.
    func makeHeldArrivalKey() {
        guard !hasHeldArrivalKey, let layer = sealer.classLayer else { return }
        do {
            hasHeldArrivalKey = try database.makeHeldArrivalKey(layer)
        } catch {
            logger.warning("no key pair for held arrivals", metadata: ["error": "\(error.message)"])
        }
    }

    /// Whether `state` was loaded with some copy still sealed under its class.
    static func holdsSealedAwayCopies(_ state: ZoneSyncState, sealer: VersionSealer) -> Bool {
        guard sealer.classLayer != nil else { return false }
        return state.records.values.contains { sealer.isSealedAway($0.version) }
            || state.unansweredBatch?.items.contains { sealer.isSealedAway($0.version) } == true
    }

    /// Marks the pending versions that cannot be pushed now; an unanswered batch that holds a copy
    /// still sealed cannot be sent again, and the round stops until the unlock.
    func holdBackLockedPushes() throws {
        guard hasSealedAway || !canSealEveryClass() else {
            machine.localStore.waitingForUnlock = []
            return
        }
        if machine.state.unansweredBatch?.items.contains(where: { sealer.isSealedAway($0.version) }) == true {
            throw SyncClientError(.keychainLocked, "the keychain is locked; a push of \"when unlocked\" items waits for the unlock")
        }
        let wait = local.unlockWait()
        machine.localStore.waitingForUnlock = Set(machine.state.records.lazy.filter { item, record in
            record.awaitsPush && !record.version.isDeleted && (self.sealer.isSealedAway(record.version) || wait(record.version.content, for: item))
        }.map(\.key))
        if !machine.localStore.waitingForUnlock.isEmpty {
            logger.info("local changes wait for the unlock", metadata: ["zone": "\(zone)", "items": "\(machine.localStore.waitingForUnlock.count)"])
        }
    }
}

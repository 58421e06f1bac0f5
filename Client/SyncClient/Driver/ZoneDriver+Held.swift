import KeychainCrypto
import SyncCore

/// Arrivals that wait (decision 0137): a pulled item the local store cannot write now (a "when
/// unlocked" keychain item while the keychain is locked), or whose versions are sealed under a key
/// epoch this device has not read in the device log yet (decision 0251), is held, sealed as the
/// server sent it, in the state commit that moves the cursor past it; the first round that finds
/// the store able to write it, and the key held, hands it to the machine, which merges it as if it
/// arrived then.
extension ZoneDriver {
    /// Whether the item must wait: one of its live versions, or the local pending version it
    /// would be merged with (a loser goes to history), cannot be written now.
    func waitsForUnlock(_ item: ItemID, _ versions: [ItemVersion], _ wait: UnlockWait) -> Bool {
        var candidates = versions
        if let record = machine.state.records[item] {
            // A copy loaded still sealed under its class cannot be merged or replaced (0237).
            if sealer.isSealedAway(record.version) { return true }
            if record.isPending { candidates.append(record.version) }
        }
        return candidates.contains { !$0.isDeleted && wait($0.content, for: item) }
    }

    /// Whether `changed` fails to open only because a version names a key epoch later than every
    /// one held (decision 0251): the next read of the device log brings the key.
    func waitsForAnEpoch(_ changed: ChangedItem<SealedVersion>) -> Bool {
        changed.versions.contains { sealer.namesAnEpochNotHeldYet($0.payload) }
    }

    /// The problem an item held for a key epoch shows in `status` until it is applied.
    static var waitsForAnEpochProblem: String {
        "sealed under a key epoch the device log this device was served does not show yet: held until it does"
    }

    /// Holds `changed` until the device log shows the epoch it names (decision 0251).
    func holdForAnEpoch(_ changed: ChangedItem<SealedVersion>) {
        hold(changed)
        heldForAnEpoch.insert(changed.item)
        problems.append((changed.item, Self.waitsForAnEpochProblem))
    }

    /// Holds `changed`, replacing an earlier arrival of the item: the later wins.
    func hold(_ changed: ChangedItem<SealedVersion>) {
        logger.info("pulled item held", metadata: ["zone": "\(zone)", "item": "\(changed.item)"])
        heldChanges.append(.hold(changed))
        heldItems.insert(changed.item)
    }

    /// Forgets the held arrival of `item` with the next commit.
    func release(_ item: ItemID) {
        heldChanges.append(.release(item))
        heldItems.remove(item)
        heldForAnEpoch.remove(item)
    }

    /// Whether some held arrival no longer waits; one that no longer opens counts (the next round
    /// rejects it).
    func hasReleasableArrivals() -> Bool {
        guard !heldItems.isEmpty, let arrivals = try? database.heldArrivals(zone, layer: sealer.classLayer) else { return false }
        let wait = local.unlockWait()
        let admission = try? writers()
        return arrivals.contains { held in
            do {
                return !waitsForUnlock(held.item, try openVersions(of: held, writers: admission), wait)
            } catch {
                return !Self.waitsForTheLog(error) && !waitsForAnEpoch(held)
            }
        }
    }

    /// The machine's actions for the held arrivals that no longer wait, in the order they arrived;
    /// they are released with the round's first commit, after their effects are applied. One
    /// that no longer opens is rejected (a problem) and released.
    func releaseHeld(report: inout SyncRoundReport) throws -> [SyncAction] {
        heldForAnEpoch = []
        guard !heldItems.isEmpty else { return [] }
        var released: [ChangedItem<ItemVersion>] = []
        let wait = local.unlockWait()
        let admission = try writers()
        for held in try database.heldArrivals(zone, layer: sealer.classLayer) {
            let versions: [ItemVersion]
            do {
                versions = try openVersions(of: held, writers: admission)
            } catch {
                if let refusal = Self.writerRefusal(error) {
                    reject(held.item, refusal, report: &report)
                    release(held.item)
                    continue
                }
                if Self.waitsForTheLog(error) || waitsForAnEpoch(held) {
                    heldForAnEpoch.insert(held.item)
                    continue
                }
                reject(held.item, Self.unopenable, report: &report)
                release(held.item)
                continue
            }
            if waitsForUnlock(held.item, versions, wait) { continue }
            release(held.item)
            released.append(.init(item: held.item, sequence: held.sequence, versions: versions))
        }
        guard !released.isEmpty else { return [] }
        touched?.formUnion(released.map(\.item))
        logger.info("held items released", metadata: ["zone": "\(zone)", "items": "\(released.count)"])
        return machine.receiveHeld(released)
    }
}

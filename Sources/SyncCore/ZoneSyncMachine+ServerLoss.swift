/// A server that lost data it held for this device, whether it says so (a restore, decision 0154)
/// or not (a restore it does not announce, one side of a fork): what the device gives back
/// (decision 0248).
extension ZoneSyncMachine {
    /// Whether a listing of `item` refused for `rejection` has the device push `record` again.
    /// Older than a version the server had: when only a loss explains it, not a collection of its
    /// successor's deletion. Leaving out an acknowledged version in a pull from the cursor: always,
    /// as an honest server replaces a version only by one that descends from it and collects one
    /// only after every active device read it. A server that merely replays answers `stale`.
    func givesBack(
        _ record: ZoneSyncState.Record, of item: ItemID, refused rejection: SyncAction.Rejection, listing: [ItemVersion], collectedAt: Int64?
    ) -> Bool {
        switch rejection {
        case .vectorWentBackwards:
            lostByServer(record, item: item, listing: listing, collectedAt: collectedAt)
                || server.givingBack && !record.isPending && record.baseline.contains(record.version.vector)
        case .acknowledgedVersionLeftOut:
            !record.isPending && !localStore.valueUnknown.contains(item) && !server.heldButUnlisted.contains(item)
        case .unknownWriteOfThisDevice:
            false
        }
    }

    /// Pushes `item`'s value again, which the server lost (decision 0248).
    mutating func giveBack(_ item: ItemID) {
        state.records[item]?.isPending = true
        server.givenBack.insert(item)
    }

    /// Whether the server lost `record`'s value, which it acknowledged or sent (decision 0248):
    /// `listing` (the item's versions, none when unlisted) holds neither it nor a version over it,
    /// and either the server lost data (it said so, or this device found its own statement gone:
    /// ``givingBack``) or it collected no deletions since the value was written (within the clock
    /// window of 0108), so no collection can have removed a deletion of it. An honest server
    /// replaces a version only by one that descends from it; one that lost data (a restore it did
    /// not announce, one side of a fork) does not.
    func lostByServer(_ record: ZoneSyncState.Record, item: ItemID, listing: [ItemVersion], collectedAt: Int64?) -> Bool {
        record.baseline.contains(where: { $0.descends(from: record.version.origin) })
            && !listing.contains(where: { $0.vector.descends(from: record.version.origin) })
            && onlyALossExplains(record, item: item, collectedAt: collectedAt)
    }

    /// Whether only a server that lost data explains that it no longer holds what `record` says
    /// it had: it said it lost data (a restore, 0154) or lost this device's statement (0248), or
    /// it collected no deletions since the record's value was written. Never for a pending record
    /// (pushed anyway) or one the local store may hold ahead of.
    private func onlyALossExplains(_ record: ZoneSyncState.Record, item: ItemID, collectedAt: Int64?) -> Bool {
        guard !record.isPending, !localStore.valueUnknown.contains(item), !server.heldButUnlisted.contains(item) else { return false }
        guard !server.givingBack, let collectedAt else { return true }
        return record.version.modifiedAt > collectedAt &+ ModificationTimeBound.window
    }
}

extension ServerModel {
    /// Answers "changes since cursor" with one page and, once the page is served, records the
    /// cursor as acknowledged.
    ///
    /// Items come in the order of their last change's sequence number, each with its whole
    /// current state. A cursor below the zone's horizon is expired. A full resync's pages are
    /// not (the device reconciles what they do not mention), unless the device was inactive when
    /// tombstones it had not acknowledged were purged: an item an earlier page mentioned may be
    /// among them, so only a resync from 0 is served until one starts.
    public mutating func pull(_ request: PullRequest, maximumBytes: Int = .max, now: Int64) -> PullResponse<SealedVersion> {
        register(request.device, now: now)
        let zone = zones[request.zone] ?? Zone()
        let admission = FeedRule.admission(
            after: request.cursor, fullResync: request.isFullResync, mustResync: devices[request.device]?.mustResync.contains(request.zone) == true,
            horizon: zone.horizon, restoredThrough: nil)
        switch admission {
        case .expired, .restored: return .cursorExpired(requestID: request.requestID)
        case .serve(let startsResync): if startsResync { devices[request.device]?.mustResync.remove(request.zone) }
        }
        let listsCollected = FeedRule.listsCollectedDeletions(fullResync: request.isFullResync, asked: request.includesCollectedDeletions)
        let page = page(
            of: request.zone, after: request.cursor, limit: min(request.limit, configuration.maximumPageSize), maximumBytes: maximumBytes,
            collectedDeletions: listsCollected)
        // Only a served page acknowledges its cursor (decision 0102).
        acknowledge(request.device, zone: request.zone, cursor: request.cursor, now: now)
        return .changes(
            requestID: request.requestID, items: page.items, nextCursor: page.nextCursor, hasMore: page.hasMore,
            deletionsCollectedAt: FeedRule.collectionTime(
                listsCollectedDeletions: listsCollected, collectedAt: zone.deletionsCollectedAt, forgottenAt: zone.deletionsForgottenAt))
    }

    /// One page of `zone`'s changes after `cursor`, without any check or acknowledgement: items in
    /// the order of their last change's sequence, at most `limit` of them, added while the bytes
    /// before them are below `maximumBytes` (so at least one); on the last page the cursor moves to
    /// the account's latest sequence. With `collectedDeletions`, the zone's collected deletions of
    /// items it no longer holds are listed too, each at its sequence (rule R10a).
    public func page(
        of zone: ZoneID, after cursor: UInt64, limit: Int, maximumBytes: Int = .max, collectedDeletions: Bool = false
    ) -> (items: [ChangedItem<SealedVersion>], nextCursor: UInt64, hasMore: Bool) {
        let limit = max(1, limit)
        let stored = zones[zone] ?? Zone()
        var listed = stored.items
        if collectedDeletions { listed.merge(stored.collectedDeletions) { current, _ in current } }
        let newer = listed.filter { $0.value.sequence > cursor }.sorted { $0.value.sequence < $1.value.sequence }
        var page: [ChangedItem<SealedVersion>] = []
        var bytes = 0
        for (item, stored) in newer {
            guard page.count < limit, bytes < maximumBytes else { break }
            page.append(ChangedItem(item: item, sequence: stored.sequence, versions: stored.versions))
            bytes += BatchMerge.bytes(stored.versions)
        }
        let hasMore = newer.count > page.count
        return (page, FeedRule.cursor(after: cursor, lastItem: page.last?.sequence, hasMore: hasMore, latest: sequence), hasMore)
    }

    /// Records that `device` has durably applied the zone's feed up to `cursor`.
    public mutating func acknowledge(_ device: DeviceID, zone: ZoneID, cursor: UInt64, now: Int64) {
        register(device, now: now)
        let previous = devices[device]?.acknowledged[zone] ?? 0
        // Never past the account's latest sequence: a cursor ahead of the feed acknowledges nothing new.
        devices[device]?.acknowledged[zone] = max(previous, min(cursor, sequence))
    }

    /// The devices heard from within the inactivity limit.
    public func activeDevices(now: Int64) -> [DeviceID] {
        devices.filter { now - $0.value.lastSeen <= configuration.inactivityLimit }.map(\.key)
    }

    /// The sequence number up to which every active device has acknowledged `zone`; `nil` when no
    /// device is active (then nothing is purged).
    public func acknowledgedFloor(of zone: ZoneID, now: Int64) -> UInt64? {
        activeDevices(now: now).map { devices[$0]?.acknowledged[zone] ?? 0 }.min()
    }

    /// Purges the tombstones every active device has acknowledged and moves each zone's horizon
    /// past them; a zone that lost tombstones records when (`collectedAt`, else `now`). Each purged
    /// tombstone stays as the item's collected deletion (rule R10a). Returns the number purged.
    @discardableResult
    public mutating func collectGarbage(now: Int64, collectedAt: Int64? = nil) -> Int {
        var purged = 0
        for (zoneID, zone) in zones {
            guard let floor = acknowledgedFloor(of: zoneID, now: now) else { continue }
            var updated = zone
            for (item, stored) in zone.items where stored.isTombstone && stored.sequence <= floor {
                updated.items[item] = nil
                updated.collectedDeletions[item] = stored
                usage.items -= 1
                usage.bytes -= BatchMerge.bytes(stored.versions)
                updated.horizon = max(updated.horizon, stored.sequence)
                purged += 1
            }
            if updated.collectedDeletions.count > FeedRule.maximumCollectedDeletions {
                let oldest = updated.collectedDeletions.sorted { $0.value.sequence < $1.value.sequence }
                    .prefix(updated.collectedDeletions.count - FeedRule.maximumCollectedDeletions)
                for (item, _) in oldest { updated.collectedDeletions[item] = nil }
                updated.deletionsForgottenAt = collectedAt ?? now
            }
            if updated.horizon > zone.horizon { updated.deletionsCollectedAt = collectedAt ?? now }
            zones[zoneID] = updated
            // Inactive devices that had not acknowledged the purged tombstones must start over
            // (marked when a purge moves the horizon, as every storage does).
            guard updated.horizon > zone.horizon else { continue }
            for (device, state) in devices where (state.acknowledged[zoneID] ?? 0) < updated.horizon {
                devices[device]?.mustResync.insert(zoneID)
            }
        }
        return purged
    }
}

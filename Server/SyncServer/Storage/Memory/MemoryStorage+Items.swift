import Foundation
import SyncCore

extension MemoryStorage {
    package func upload(_ batch: UploadBatch, limits: UploadLimits, now: Date) async throws -> UploadReceipt {
        let answer = try withModel(batch.account) { model, known in
            model.configuration.maximumSiblings = limits.maximumSiblings
            model.configuration.maximumItems = limits.maximumItemsPerAccount
            model.configuration.maximumBytes = limits.maximumBytesPerAccount
            let answer = model.apply(batch.rule, from: batch.device, zone: batch.zone, now: Self.milliseconds(now))
            // The model enrols a device by its first request; the storage keeps only registered ones.
            if !known.contains(batch.device) { model.revoke(batch.device) }
            return answer
        }
        touch(batch.device, of: batch.account, now: now)
        if answer.status == .committed, answer.results.contains(where: { $0.sequence != nil }) {
            broadcaster.publish(AccountChange(account: batch.account, zone: batch.zone, sequence: answer.latestSequence))
        }
        return try answer.receipt()
    }

    package func changes(_ query: ChangeQuery) async throws -> ChangeFeed {
        let zone = query.zone
        let feed: ChangeFeed = try withModel(query.account) { model, known in
            let horizon = model.zones[zone]?.horizon ?? 0
            guard let device = query.device else {
                let admission = FeedRule.admission(
                    after: query.after, told: query.told, fullResync: query.fullResync, mustResync: false, horizon: horizon, restoredThrough: nil)
                if let refusal = ChangeFeed.refusal(admission, horizon: horizon) { return refusal }
                let listsCollected = FeedRule.listsCollectedDeletions(fullResync: query.fullResync, asked: query.includesCollectedDeletions)
                let page = model.page(
                    of: zone, after: query.after, limit: query.limit, maximumBytes: query.maximumBytes, collectedDeletions: listsCollected)
                let collectedAt = FeedRule.collectionTime(
                    listsCollectedDeletions: listsCollected, collectedAt: model.zones[zone]?.deletionsCollectedAt,
                    forgottenAt: model.zones[zone]?.deletionsForgottenAt)
                return .page(Self.page(page.items, cursor: page.nextCursor, hasMore: page.hasMore, collectedAt: collectedAt))
            }
            let request = PullRequest(
                requestID: RequestID(epoch: 0, number: 0), device: device, zone: zone, cursor: query.after,
                isFullResync: query.fullResync, limit: query.limit, includesCollectedDeletions: query.includesCollectedDeletions)
            let response = model.pull(request, maximumBytes: query.maximumBytes, now: Self.milliseconds(query.now))
            if !known.contains(device) { model.revoke(device) }
            switch response {
            // (The model is never restored from a backup, so it never answers `feedRestored`.)
            case .cursorExpired, .feedRestored: return .cursorExpired(horizon: horizon)
            case .changes(_, let items, let cursor, let hasMore, let collectedAt):
                return .page(Self.page(items, cursor: cursor, hasMore: hasMore, collectedAt: collectedAt))
            }
        }
        if let device = query.device, case .page = feed { touch(device, of: query.account, now: query.now) }
        return feed
    }

    private static func page(_ items: [ChangedItem<SealedVersion>], cursor: UInt64, hasMore: Bool, collectedAt: Int64?) -> ChangePage {
        ChangePage(
            items: items, cursor: cursor, hasMore: hasMore, deletionsCollectedAt: collectedAt.map { Date(timeIntervalSince1970: Double($0) / 1000) })
    }

    package func acknowledge(
        device: DeviceID, of account: AccountID, zone: ZoneID, through sequence: UInt64, now: Date
    ) async throws {
        try withModel(account) { model, known in
            guard known.contains(device) else { return }
            model.acknowledge(device, zone: zone, cursor: sequence, now: Self.milliseconds(now))
        }
        touch(device, of: account, now: now)
    }

    /// The model measures inactivity from `now`: with `activeSince`, a limit of 0 at that instant
    /// keeps exactly the devices seen since then; without, every device it knows is active.
    package func collectGarbage(activeSince: Date?, now: Date) async throws -> Int {
        state.withLock { state in
            var collected = 0
            for account in Array(state.models.keys) {
                var model = state.models[account]!
                model.configuration.inactivityLimit = activeSince == nil ? .max : 0
                collected += model.collectGarbage(now: activeSince.map(Self.milliseconds) ?? 0, collectedAt: Self.milliseconds(now))
                state.models[account] = model
            }
            return collected
        }
    }
}

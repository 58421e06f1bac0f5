import SyncCore

/// Versions a device uploads to one zone in one atomic batch: the one rule's batch
/// (`BatchMerge.Batch`), with the account, device and zone it is addressed to.
package struct UploadBatch: Sendable, Equatable {
    package typealias Item = BatchMerge.Incoming<ItemID, SealedVersion>

    package var account: AccountID
    package var device: DeviceID
    package var zone: ZoneID
    /// The batch as the rule takes it: the feed position the device had applied when it made the
    /// versions (below the zone's horizon the batch is refused with `cursorExpired`); the
    /// versions, by item ID (validated by the HTTP layer), merged in order.
    package var rule: BatchMerge.Batch<ItemID, SealedVersion>

    package var cursor: UInt64 { rule.cursor }
    package var items: [Item] { rule.items }

    package init(account: AccountID, device: DeviceID, zone: ZoneID, cursor: UInt64, items: [Item]) {
        self.account = account
        self.device = device
        self.zone = zone
        self.rule = BatchMerge.Batch(cursor: cursor, items: items)
    }
}

/// Per-account bounds an upload is checked against inside its transaction.
package struct UploadLimits: Sendable, Equatable {
    /// The most items (including tombstones) an account may hold across its zones.
    package var maximumItemsPerAccount: Int
    /// The most bytes of stored blobs an account may hold (decision 0101).
    package var maximumBytesPerAccount: Int
    /// The most concurrent versions of one item (see `ServerMerge.maximumSiblings`).
    package var maximumSiblings: Int

    package init(
        maximumItemsPerAccount: Int, maximumBytesPerAccount: Int = BatchMerge.Limits.defaultMaximumBytes,
        maximumSiblings: Int = ServerMerge.maximumSiblings
    ) {
        self.maximumItemsPerAccount = maximumItemsPerAccount
        self.maximumBytesPerAccount = maximumBytesPerAccount
        self.maximumSiblings = maximumSiblings
    }

    /// The same bounds for the one batch rule.
    package var rule: BatchMerge.Limits {
        BatchMerge.Limits(maximumSiblings: maximumSiblings, maximumItems: maximumItemsPerAccount, maximumBytes: maximumBytesPerAccount)
    }
}

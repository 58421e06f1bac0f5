import SyncCore

/// Versions a device uploads to one zone in one atomic batch.
package struct UploadBatch: Sendable, Equatable {
    /// One incoming version of one item.
    package struct Item: Sendable, Equatable {
        /// The opaque item ID (validated by the HTTP layer).
        package var id: String
        package var version: SealedVersion

        package init(id: String, version: SealedVersion) {
            self.id = id
            self.version = version
        }
    }

    package var account: AccountID
    package var device: DeviceID
    package var zone: String
    /// The device's number for the batch (per zone, increasing; SyncCore's `PushBatch.batchID`), or
    /// nil when it sent none. A numbered batch equal to the device's last one gets the remembered
    /// answer; an older one is `superseded` (decision 0100).
    package var batchID: UInt64?
    /// The feed position the device had applied when it made these versions (as SyncCore's
    /// `PushBatch.cursor`). Below the zone's horizon the device may not have seen a collected
    /// deletion, so the batch is refused with `cursorExpired`.
    package var cursor: UInt64
    package var items: [Item]

    package init(account: AccountID, device: DeviceID, zone: String, batchID: UInt64? = nil, cursor: UInt64, items: [Item]) {
        self.account = account
        self.device = device
        self.zone = zone
        self.batchID = batchID
        self.cursor = cursor
        self.items = items
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

import Foundation
import SyncCore

/// A page request of a zone's change feed.
package struct ChangeQuery: Sendable, Equatable {
    package var account: AccountID
    package var zone: ZoneID
    /// The cursor: the sequence number of the last change already seen (0: the beginning). Asking
    /// from 0 after tombstones were collected expires too: a new device asks with `fullResync`.
    package var after: UInt64
    /// The account's latest sequence the device was told (its cursor may lag behind): a restore
    /// from a backup that ended below it is announced as below the cursor (R9).
    package var told: UInt64
    /// The most items in the page (at least 1).
    package var limit: Int
    /// The byte budget of the page (blob bytes of every version): items are added while the bytes
    /// before them are below it, so a page holds at least one item and at most the budget plus one
    /// item; a page cut by it has `hasMore` set (decision 0104).
    package var maximumBytes: Int
    /// Page through every current item without the expiry check: the client is reconciling in
    /// full (it was told its cursor expired, or it is new) and treats items it does not see as
    /// unknown to the server.
    package var fullResync: Bool
    /// With `fullResync`: list the collected deletions of items the zone no longer holds too
    /// (rule R10a), for a device that has items to reconcile.
    package var includesCollectedDeletions: Bool
    /// The asking device, or nil for a plain read. A device's pull is checked against its
    /// `mustResync` mark (a full resync from 0 clears it), and once the page is served, in the same
    /// transaction, acknowledges `after` (decision 0102).
    package var device: DeviceID?
    /// When the device asked (its last-seen time).
    package var now: Date

    package init(
        account: AccountID, zone: ZoneID, after: UInt64, told: UInt64 = 0, limit: Int, maximumBytes: Int = .max, fullResync: Bool = false,
        includesCollectedDeletions: Bool = false, device: DeviceID? = nil, now: Date = Date(timeIntervalSince1970: 0)
    ) {
        self.includesCollectedDeletions = includesCollectedDeletions
        self.account = account
        self.zone = zone
        self.after = after
        self.told = told
        self.limit = limit
        self.maximumBytes = maximumBytes
        self.fullResync = fullResync
        self.device = device
        self.now = now
    }
}

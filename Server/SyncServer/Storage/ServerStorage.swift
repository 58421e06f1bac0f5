import Crypto
import Foundation
import ServiceLifecycle
import SyncCore

/// Where the sync server keeps accounts, devices and item versions: the one seam between the HTTP
/// layer and a database (SQLite by default, PostgreSQL at scale). Every backend runs the same
/// contract tests (`StorageContract` in SyncServerTests).
///
/// Rules every backend keeps:
/// - Each method is atomic: it commits all of its writes or none.
/// - Sequence numbers are per account, start at 1, and grow by one for every accepted write
///   (applied or conflict-kept); a stale version gets none.
/// - Failures are ``SyncServerError`` values with a stable code (`accountExists`, `quotaExceeded`,
///   `tooManySiblings`, `cursorExpired`, `notFound`, `storageFailure`); messages never carry blobs,
///   tokens or SQL arguments. Refusals caused by items name them in `items`.
/// - Uploads are decided by the one batch rule, SyncCore's `BatchMerge` (decision 0100): a backend
///   reads the working set in the batch's transaction and stores what the rule returns.
/// - Times come from the caller (`now`), so tests control them.
package protocol ServerStorage: AccountAdministration, AccountStateStorage, ApprovalStorage, GroupStorage {
    /// Stores a new account; throws `accountExists` when the name is taken.
    func createAccount(_ account: NewAccount, now: Date) async throws

    /// The stored sign-in material of the account called `name`, or nil when there is none.
    func account(named name: String) async throws -> AccountRecord?

    /// The stored sign-in material of the account `id`, or nil when there is none.
    func account(id: AccountID) async throws -> AccountRecord?

    /// Replaces an account's sign-in material (password change: new verifier, KDF parameters, salt
    /// and wrapped keys); throws `notFound` for an unknown account.
    func replaceCredentials(of account: AccountID, with credentials: AccountCredentials) async throws

    /// Registers a device (or signs an existing one in again) with a new token hash; the previous
    /// token of that device stops working. Throws `deviceRevoked` for a revoked device ID (a
    /// revocation is for good) and `quotaExceeded` when the account already has `maximumDevices`
    /// active devices and this is a new one.
    func registerDevice(_ device: NewDevice, maximumDevices: Int, now: Date) async throws -> DeviceRecord

    /// The active (not revoked) device whose token hashes to `tokenHash`, or nil.
    ///
    /// Backends look the hash up by index; the hash is of a 256-bit random token, so the lookup
    /// itself leaks nothing useful about the token.
    func device(tokenHash: [UInt8]) async throws -> DeviceRecord?

    /// Every device of the account, revoked ones included, ordered by device ID.
    func devices(of account: AccountID) async throws -> [DeviceRecord]

    /// Revokes a device of the account, for good: its token stops working, it no longer holds back
    /// tombstone collection, signing in again with its ID is refused (`deviceRevoked`), and every
    /// listener hears an ``AccountChange`` naming it (so each server process closes its push
    /// connections). Returns false when the account has no such device.
    func revokeDevice(_ device: DeviceID, of account: AccountID, now: Date) async throws -> Bool

    /// Forgets a device of the account: its row and its acknowledgements go, so it no longer holds
    /// tombstones back, and unlike a revocation its ID may register again. Used for the rows a
    /// shared group's hidden account keeps for members' devices (``GroupZones``), never for a
    /// device people sign in with.
    func forgetDevice(_ device: DeviceID, of account: AccountID) async throws

    /// Decides a batch with SyncCore's `BatchMerge` and stores the result atomically: either every
    /// item gets its outcome and accepted ones their sequence numbers, or (`cursorExpired` when
    /// `batch.cursor` is below the zone's horizon or the device must resync, `tooManySiblings`,
    /// `quotaExceeded` — both naming their items — or any failure) nothing of the batch is written.
    /// Items of one batch are merged in order, so a later item with the same ID merges against the
    /// result of the earlier one; a batch sent again is merged again (what it stored comes back
    /// stale). A registered device's batch cursor is acknowledged in the same transaction.
    /// (`MemoryStorage` runs the reference `ServerModel`.)
    func upload(_ batch: UploadBatch, limits: UploadLimits, now: Date) async throws -> UploadReceipt

    /// The items of a zone changed after `query.after`, oldest change first, each with its current
    /// versions, bounded by `query.limit` and `query.maximumBytes`; or
    /// ``ChangeFeed/cursorExpired(horizon:)`` when the cursor is below the zone's horizon (unless
    /// `query.fullResync`, which pages through everything regardless) or when `query.device` must
    /// resync the zone (only a full resync from 0 is served, and clears the mark). For a device,
    /// `after` is acknowledged in the same transaction, only when the page is served (decision 0102).
    /// The last page's cursor is the account's latest sequence. (SyncCore's `ServerModel.pull` is
    /// the reference.)
    func changes(_ query: ChangeQuery) async throws -> ChangeFeed

    /// Records that `device` has applied every change of `zone` up to `sequence` (clamped to the
    /// account's latest sequence; an acknowledgement never moves backwards).
    func acknowledge(
        device: DeviceID, of account: AccountID, zone: ZoneID, through sequence: UInt64, now: Date
    ) async throws

    /// Drops every tombstone-only item that every active device of its account has acknowledged
    /// past, raises the zone's horizon to the highest sequence dropped, subtracts the items and
    /// bytes from the account's usage, and marks every non-revoked device that had not
    /// acknowledged up to the new horizon as having to resync the zone from 0. Active: not revoked
    /// and, when `activeSince` is given, seen since then. An account without active devices keeps
    /// its tombstones. A zone that lost tombstones records `now` as the time of its latest
    /// collection, which its feed pages carry from then on (decision 0175). Each dropped tombstone
    /// is kept as its item's collected deletion (``FeedRule``, decision 0256), which a full resync
    /// that asks lists. Returns how many items were dropped.
    func collectGarbage(activeSince: Date?, now: Date) async throws -> Int

    /// Runs until the task is cancelled, calling `handler` for every upload committed through this
    /// storage, by this process or (for a shared database) by any other. The server's push hub is
    /// the one caller.
    func listenForChanges(_ handler: @escaping @Sendable (AccountChange) async -> Void) async throws

    /// The random 256-bit secret that every server process on this storage shares: it keys the fake
    /// pre-sign-in answers for unknown accounts, which must not differ between processes (decision
    /// 0065). Created on first use, race-free: concurrent first calls, from any process, all get
    /// the one that was stored.
    func serverSecret() async throws -> SymmetricKey

    /// What must run for as long as the storage is used (PostgreSQL: its connection pool), for the
    /// application's service group, which starts them first and shuts them down last (decision
    /// 0066). Empty when the backend needs nothing running.
    var services: [any Service] { get }
}

import Foundation
import SyncCore
import SyncProtocol

/// What a server keeps of an account's authenticated state (decision 0120): the device log and
/// each device's latest signed statement per zone. Both are opaque to the server: entries and
/// statements are signed, or sealed, by devices with keys the server does not have, and devices
/// verify them. The server only orders the log (an append names the index it extends, so two
/// devices appending at once cannot both succeed) and bounds sizes.
///
/// Part of every ``ServerStorage``; the contract suite runs these rules on every backend.
package protocol AccountStateStorage: Sendable {
    /// Appends `entry` to the account's device log at `index`, which must be the log's length:
    /// otherwise `logConflict` (someone appended first: read the log and try again). Throws
    /// `notFound` for an unknown account and `quotaExceeded` when the log holds
    /// `AccountStateLimits.maximumLogEntries`.
    func appendDeviceLogEntry(_ entry: [UInt8], at index: Int, of account: AccountID, now: Date) async throws

    /// The account's device log entries from `index` on, at most `limit`, in order.
    func deviceLog(of account: AccountID, from index: Int, limit: Int) async throws -> [DeviceLogRecord]

    /// Replaces `device`'s statement about `zone` with `statement`.
    func publishStatement(_ statement: [UInt8], zone: ZoneID, device: DeviceID, of account: AccountID, now: Date) async throws

    /// The latest statement of every device of the account, revoked ones included, about `zone`,
    /// ordered by device ID.
    func statements(zone: ZoneID, of account: AccountID) async throws -> [StatementRecord]

    /// Replaces the account's identity card (decision 0282): opaque, signed by the account's
    /// identity key, which other accounts' devices check and pin.
    func publishIdentityCard(_ card: [UInt8], of account: AccountID, now: Date) async throws

    /// The account's identity card; nil when it has published none.
    func identityCard(of account: AccountID) async throws -> [UInt8]?
}

/// One entry of an account's device log, as stored: its position and its opaque bytes.
package struct DeviceLogRecord: Sendable, Equatable {
    package var index: Int
    package var entry: [UInt8]

    package init(index: Int, entry: [UInt8]) {
        self.index = index
        self.entry = entry
    }
}

/// A device's latest signed statement about one zone, as stored.
package struct StatementRecord: Sendable, Equatable {
    package var device: DeviceID
    package var statement: [UInt8]
    package var publishedAt: Date

    package init(device: DeviceID, statement: [UInt8], publishedAt: Date) {
        self.device = device
        self.statement = statement
        self.publishedAt = publishedAt
    }
}

/// The bounds on what an account's authenticated state may take on the server.
package enum AccountStateLimits {
    /// The largest device log entry (an entry holds two public keys, an X-Wing one of 1,216 bytes,
    /// wrapped epoch keys for up to the device limit, and a signature).
    package static let maximumEntryBytes = 64 * 1024
    /// The most entries one account's log may hold: every enrolment, revocation and epoch change
    /// adds one.
    package static let maximumLogEntries = DeviceLogBounds.maximumEntries
    /// The largest statement.
    package static let maximumStatementBytes = 4 * 1024
    /// The largest identity card (one is about 1,350 bytes: an X-Wing public key of 1,216).
    package static let maximumIdentityCardBytes = 4 * 1024
    /// The most entries one read of the log returns.
    package static let maximumLogPage = DeviceLogBounds.maximumPage
}

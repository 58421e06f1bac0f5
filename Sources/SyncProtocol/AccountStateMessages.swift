import Foundation
import SyncCore

/// What the server promises about an account's device log, which clients hold it to.
public enum DeviceLogBounds {
    /// The most entries one account's log holds.
    public static let maximumEntries = 10_000
    /// The most entries one `GET /v1/device-log` returns.
    public static let maximumPage = 500
}

/// `POST /v1/device-log`: appends one signed (or sealed) entry to the account's device log at
/// `index`, which must be the log's length (`409 log_conflict` otherwise: read and try again).
public struct DeviceLogAppendRequest: Hashable, Sendable, Codable {
    /// The position the entry takes: the log's length as the device last read it.
    public var index: Int
    /// The entry's bytes, opaque to the server.
    public var entry: Base64Bytes

    /// Creates a request.
    public init(index: Int, entry: Base64Bytes) {
        self.index = index
        self.entry = entry
    }
}

/// One entry of the device log, as `GET /v1/device-log` returns it.
public struct DeviceLogEntryMessage: Hashable, Sendable, Codable {
    /// Its position in the log, from 0.
    public var index: Int
    /// Its bytes, which devices verify.
    public var entry: Base64Bytes

    /// Creates an entry.
    public init(index: Int, entry: Base64Bytes) {
        self.index = index
        self.entry = entry
    }
}

/// The answer to `GET /v1/device-log?from=N`: entries from `N` on, in order; `hasMore` when the
/// page was cut.
public struct DeviceLogResponse: Hashable, Sendable, Codable {
    /// The entries, in order.
    public var entries: [DeviceLogEntryMessage]
    /// Whether more entries follow the last one.
    public var hasMore: Bool

    /// Creates a response.
    public init(entries: [DeviceLogEntryMessage], hasMore: Bool) {
        self.entries = entries
        self.hasMore = hasMore
    }
}

/// `PUT /v1/zones/{zone}/statement`: the caller's latest signed statement about a zone.
public struct StatementRequest: Hashable, Sendable, Codable {
    /// The statement's bytes, opaque to the server.
    public var statement: Base64Bytes

    /// Creates a request.
    public init(statement: Base64Bytes) { self.statement = statement }
}

/// One device's latest statement about a zone.
public struct StatementMessage: Hashable, Sendable, Codable {
    /// The device that published it (as the server says; the statement's signature tells).
    public var device: DeviceID
    /// The statement's bytes.
    public var statement: Base64Bytes

    /// Creates an entry.
    public init(device: DeviceID, statement: Base64Bytes) {
        self.device = device
        self.statement = statement
    }
}

/// The answer to `GET /v1/zones/{zone}/statements`: every device's latest statement, by device ID.
public struct StatementListResponse: Hashable, Sendable, Codable {
    /// The statements.
    public var statements: [StatementMessage]
    /// The server's device inactivity limit in milliseconds: how long it keeps a tombstone for a
    /// device that does not sync (`sync-server --device-inactivity-limit`). A statement older than
    /// that may name writes whose only trace was collected since, so a device does not hold the
    /// server to it (decision 0231). Absent from older servers.
    public var deviceInactivityLimit: Int64?

    /// Creates a response.
    public init(statements: [StatementMessage], deviceInactivityLimit: Int64? = nil) {
        self.statements = statements
        self.deviceInactivityLimit = deviceInactivityLimit
    }
}

/// `PUT /v1/identity`: the caller's account's identity card (decision 0282); also the answer to
/// `POST /v1/identities/lookup`. Opaque to the server: signed by the account's identity key, which
/// other accounts' devices check and pin.
public struct IdentityCardMessage: Hashable, Sendable, Codable {
    /// The card's bytes.
    public var card: Base64Bytes

    /// Creates a message.
    public init(card: Base64Bytes) { self.card = card }
}

/// `POST /v1/identities/lookup`: the identity card another account published, by the account's
/// name (`404 not_found` when there is no such account or it published none).
public struct IdentityLookupRequest: Hashable, Sendable, Codable {
    /// The other account's name.
    public var account: String

    /// Creates a request.
    public init(account: String) { self.account = account }
}

import Foundation
import SyncCore

/// Everything the server can be told, with documented defaults (decision 0044).
package struct ServerConfiguration: Sendable {
    /// Size and count limits; every request is checked against them before anything is stored.
    package struct Limits: Sendable, Equatable {
        /// The largest request body, in bytes (8 MiB).
        package var maximumRequestBytes = 8 << 20
        /// The largest body of a route that needs no token (account creation, pre-sign-in, sign-in,
        /// recovery), in bytes: 64 KiB, against about 12 KiB for the largest of them (an account's
        /// keys), so that a stranger cannot make the server hold 8 MiB per connection (decision
        /// 0266). ``maximumRequestBytes`` when that is smaller.
        package var maximumUnauthenticatedRequestBytes = 64 << 10
        /// The most items in one upload batch.
        package var maximumBatchItems = 500
        /// The largest sealed blob, in bytes (64 KiB).
        package var maximumBlobBytes = 64 << 10
        /// The longest item ID, in bytes.
        package var maximumItemIDBytes = 128
        /// The most entries in a version vector (`VersionVector.maximumEntries`).
        package var maximumVectorEntries = 64
        /// The most items (tombstones included) one account may hold.
        package var maximumItemsPerAccount = 100_000
        /// The most bytes of stored blobs (every sibling, tombstones included) one account may hold:
        /// 100 MiB (decision 0101).
        package var maximumBytesPerAccount = BatchMerge.Limits.defaultMaximumBytes
        /// The most concurrent versions of one item.
        package var maximumSiblings = 32
        /// The most active devices per account.
        package var maximumDevicesPerAccount = 100
        /// The most simultaneous push connections per account.
        package var maximumPushConnectionsPerAccount = 20
        /// The most items in one page of changes (a client may ask for fewer).
        package var maximumPageItems = 500
        /// The byte budget of one page of changes (blob bytes; decision 0104): 4 MiB. A page ends
        /// with the item that reaches it.
        package var maximumPageBytes = 4 << 20
        /// The longest wrapped key, salt or similar opaque account value, in bytes.
        package var maximumKeyMaterialBytes = 4_096

        package init() {}

        /// The body limit of a route that needs no token.
        var unauthenticatedBodyLimit: Int { min(maximumRequestBytes, maximumUnauthenticatedRequestBytes) }
    }

    /// Sign-in and account-creation budgets (decision 0151), per window.
    package struct SignInRateLimit: Sendable, Equatable {
        /// Failed sign-ins (and password changes) per account name from one client address.
        package var attemptsPerAccount = 10
        /// Failed sign-ins per account name from all addresses together; an address that signed in
        /// to the account before is not held to it.
        package var failuresPerAccount = 100
        /// Attempts of any kind (pre-sign-in, sign-in, account creation, password change) per
        /// client address.
        package var attemptsPerAddress = 30
        package var window: TimeInterval = 60
        /// New accounts per client address per ``creationWindow``.
        package var accountCreationsPerAddress = 5
        package var creationWindow: TimeInterval = 3600

        package init() {}
    }

    /// How many failed bearer-token authentications (missing, malformed, unknown or revoked token)
    /// are allowed per window and client address; over it, every bearer-token request from the
    /// address gets `429 rate_limited` until the window ends.
    package struct TokenFailureRateLimit: Sendable, Equatable {
        package var failuresPerAddress = 100
        package var window: TimeInterval = 60

        package init() {}
    }

    /// How many connections the server holds open and how long each may take to send what it
    /// owes (decision 0266), whatever the connection carries; see docs/operations.md, "Hostile
    /// connections".
    package struct Connections: Sendable, Equatable {
        /// The most connections open at once from one client address (an ``AddressKey``: an IPv6
        /// client by its /64). A device holds one push connection and opens a few short ones, so
        /// 128 lets about forty devices share one address (a household, an office behind NAT).
        package var maximumPerAddress = 128
        /// The most connections open at once from all clients together: under the file
        /// descriptors a server is given (`LimitNOFILE=65536`), with room for the database.
        package var maximumTotal = 10_000
        /// How long a request head may take to arrive: from the connection's start (the TLS
        /// handshake included), or on a kept-alive connection from its first byte.
        package var headerTimeout: Duration = .seconds(30)
        /// How long a request body may take to arrive, from the end of its head (8 MiB at 70 KB/s).
        package var bodyTimeout: Duration = .seconds(120)
        /// How long a kept-alive connection may wait for its next request, and how long a client
        /// may leave an answer unread while the server cannot write more.
        package var idleTimeout: Duration = .seconds(90)

        package init() {}
    }

    package var limits = Limits()
    package var connections = Connections()
    package var signInRateLimit = SignInRateLimit()
    package var tokenFailureRateLimit = TokenFailureRateLimit()
    /// Devices not seen for this long stop holding tombstones back (`--device-inactivity-limit`,
    /// 30 days, as SyncCore's `ServerModel.Configuration`).
    package var deviceInactivityLimit: Duration = .seconds(30 * 24 * 3600)
    /// How often tombstones are collected, after a first collection at start
    /// (`--tombstone-collection-interval`, 1 hour; decision 0103).
    package var tombstoneCollectionInterval: Duration = .seconds(3600)

    package init() {}
}

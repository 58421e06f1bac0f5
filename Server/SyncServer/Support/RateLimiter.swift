import Foundation
import Synchronization

/// The server's per-process rate limits, in fixed windows (decisions 0044, 0064 and 0151):
/// - sign-in attempts (pre-sign-in, sign-in, account creation, password change) per client
///   address: one source cannot hammer the verifier;
/// - failed sign-ins per account name *and* address: a stranger's wrong guesses spend only their
///   own budget for that account, never the owner's;
/// - failed sign-ins per account name from every address together: slows a guesser spread over many
///   addresses, but does not apply to an address that signed in to the account before, so even a
///   distributed stranger keeps a known owner out of nothing, and a new owner device out of at
///   most one window;
/// - account creations per address per hour;
/// - failed bearer-token authentications per client address: an address over its budget gets
///   `429 rate_limited` for every bearer-token request, valid token or not, until its window
///   ends. The token is not even looked up, so guessing gains nothing and costs the database
///   nothing.
/// Every refusal says when to come back (`Retry-After`). Addresses are ``AddressKey``s: an IPv6
/// client is counted by its /64.
struct RateLimiter: Sendable {
    private let signIn: ServerConfiguration.SignInRateLimit
    private let tokenFailures: ServerConfiguration.TokenFailureRateLimit
    private let attemptWindows: FixedWindows
    private let failureWindows: FixedWindows
    private let creationWindows: FixedWindows
    private let tokenFailureWindows: FixedWindows
    private let knownAddresses = KnownAddresses()

    init(configuration: ServerConfiguration, clock: ServerClock) {
        signIn = configuration.signInRateLimit
        tokenFailures = configuration.tokenFailureRateLimit
        attemptWindows = FixedWindows(length: signIn.window, clock: clock)
        failureWindows = FixedWindows(length: signIn.window, clock: clock)
        creationWindows = FixedWindows(length: signIn.creationWindow, clock: clock)
        tokenFailureWindows = FixedWindows(length: tokenFailures.window, clock: clock)
    }

    /// Counts one sign-in attempt from `address` and, when `account` is given, checks that neither
    /// the account's failures from this address nor (for an address not known to the account) its
    /// failures from everywhere are over budget.
    ///
    /// - Throws: `429 rate_limited` with the seconds until the exhausted window ends.
    func checkSignInAttempt(account: String?, address: AddressKey) throws(APIError) {
        let addressKey = "n:" + address.description
        guard attemptWindows.count([(key: addressKey, budget: signIn.attemptsPerAddress)]) == [true] else {
            throw APIError.rateLimited(retryAfter: attemptWindows.secondsLeft(addressKey))
        }
        guard let account else { return }
        let pairKey = Self.pairKey(account: account, address: address)
        if failureWindows.current(pairKey) >= signIn.attemptsPerAccount {
            throw APIError.rateLimited(retryAfter: failureWindows.secondsLeft(pairKey))
        }
        let accountKey = "a:" + account
        if failureWindows.current(accountKey) >= signIn.failuresPerAccount && !knownAddresses.contains(address, for: account) {
            throw APIError.rateLimited(retryAfter: failureWindows.secondsLeft(accountKey))
        }
    }

    /// Counts a failed sign-in (wrong auth key or unknown account) against `account`.
    func recordSignInFailure(account: String, address: AddressKey) {
        _ = failureWindows.count([
            (key: Self.pairKey(account: account, address: address), budget: signIn.attemptsPerAccount),
            (key: "a:" + account, budget: signIn.failuresPerAccount),
        ])
    }

    /// Remembers that `address` signed in to `account`: the account-wide failure budget no longer
    /// applies to it.
    func recordSignInSuccess(account: String, address: AddressKey) {
        knownAddresses.insert(address, for: account)
    }

    /// Counts one account creation from `address`.
    ///
    /// - Throws: `429 rate_limited` when the address created its budget of accounts this window.
    func checkAccountCreation(address: AddressKey) throws(APIError) {
        try checkSignInAttempt(account: nil, address: address)
        guard creationWindows.count([(key: address.description, budget: signIn.accountCreationsPerAddress)]) == [true] else {
            throw APIError.rateLimited(
                retryAfter: creationWindows.secondsLeft(address.description), "too many new accounts from this address; retry later")
        }
    }

    /// Whether `address` has spent its budget of failed token authentications.
    func isTokenBlocked(_ address: AddressKey) -> Bool {
        tokenFailureWindows.current(address.description) >= tokenFailures.failuresPerAddress
    }

    /// Seconds until `address`'s window of token failures ends.
    func tokenRetryAfter(_ address: AddressKey) -> Int { tokenFailureWindows.secondsLeft(address.description) }

    /// Counts one failed token authentication from `address`.
    func recordTokenFailure(_ address: AddressKey) {
        _ = tokenFailureWindows.count([(key: address.description, budget: tokenFailures.failuresPerAddress)])
    }

    private static func pairKey(account: String, address: AddressKey) -> String { "p:" + address.description + "\u{0}" + account }
}

/// The addresses that signed in to each account, as far as this process has seen (bounded: the
/// table is forgotten wholesale when it grows past its size, which only brings back the
/// account-wide budget for those addresses).
private final class KnownAddresses: Sendable {
    private static let capacity = 100_000
    private let entries = Mutex<Set<String>>([])

    func insert(_ address: AddressKey, for account: String) {
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries.insert(Self.key(address, account))
        }
    }

    func contains(_ address: AddressKey, for account: String) -> Bool {
        entries.withLock { $0.contains(Self.key(address, account)) }
    }

    private static func key(_ address: AddressKey, _ account: String) -> String { address.description + "\u{0}" + account }
}

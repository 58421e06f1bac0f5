import Foundation

/// The server's per-process rate limits, in fixed windows (decisions 0044 and 0064):
/// - sign-in attempts per account name and per client address: an attempt over either budget is
///   refused without touching the verifier;
/// - failed bearer-token authentications (missing, malformed, unknown or revoked token) per
///   client address: an address over its budget gets `429 rate_limited` for every bearer-token
///   request, valid token or not, until its window ends. The token is not even looked up, so
///   guessing gains nothing and costs the database nothing.
struct RateLimiter: Sendable {
    private let signIn: ServerConfiguration.SignInRateLimit
    private let tokenFailures: ServerConfiguration.TokenFailureRateLimit
    private let signInWindows: FixedWindows
    private let tokenFailureWindows: FixedWindows

    init(configuration: ServerConfiguration, clock: ServerClock) {
        signIn = configuration.signInRateLimit
        tokenFailures = configuration.tokenFailureRateLimit
        signInWindows = FixedWindows(length: signIn.window, clock: clock)
        tokenFailureWindows = FixedWindows(length: tokenFailures.window, clock: clock)
    }

    /// Counts one sign-in attempt; false when the account's (if given) or the address's budget is spent.
    func allowSignInAttempt(account: String?, address: String) -> Bool {
        var keys = [(key: "n:" + address, budget: signIn.attemptsPerAddress)]
        if let account { keys.append((key: "a:" + account, budget: signIn.attemptsPerAccount)) }
        return signInWindows.count(keys).allSatisfy { $0 }
    }

    /// Whether `address` has spent its budget of failed token authentications.
    func isTokenBlocked(_ address: String) -> Bool {
        tokenFailureWindows.current(address) >= tokenFailures.failuresPerAddress
    }

    /// Counts one failed token authentication from `address`.
    func recordTokenFailure(_ address: String) {
        _ = tokenFailureWindows.count([(key: address, budget: tokenFailures.failuresPerAddress)])
    }
}

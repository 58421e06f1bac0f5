/// What a malicious server does in a run's faulty phase (issue 12, item 5; decision 0203), on
/// some of its answers, to every device; it turns honest when the faults heal. Unlike a
/// ``ShippedBreak`` it must not violate any property: the devices must lose nothing, bring
/// nothing back and agree once the server is honest again, and they report what they can tell.
package enum ShippedMalice: String, CaseIterable, Sendable {
    /// Leaves items out of the pages it serves.
    case withhold
    /// Serves an older version of an item in place of the current one (a replay).
    case replay
    /// Answers a pull with an expired cursor, then a full resync that stops early, listing only
    /// some items (a forced, wiping resync).
    case forcedResync = "forced-resync"
    /// Leaves statements out, or serves a device's older statement in place of its latest.
    case hideStatements = "hide-statements"
    /// Serves some devices a copy of the account taken a while into the faults (a fork): each
    /// group sees only its own writes and statements from then on. When the faults heal it serves
    /// every device the other copy, so the fork's writes are lost to it, as after a restore from a
    /// backup that the server does not announce.
    case fork
    /// A quarter into the faults one device revokes another (which enrols again at once, its
    /// keychain keeping its items) and starts a new key epoch; the server serves every other
    /// device its device log as it was before the revocation until the faults heal, so they keep
    /// the old key, which the revoked device holds (decision 0252).
    case staleEpoch = "stale-epoch"

    /// The malice of seed `seed`: one seed in three has one, in turn.
    package static func of(seed: UInt64) -> ShippedMalice? {
        guard seed % 3 == 2 else { return nil }
        return allCases[Int((seed / 3) % UInt64(allCases.count))]
    }
}

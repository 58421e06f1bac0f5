/// What the check of the zone's statements asks of the rounds (R59, R62): a finding sends the next
/// round to read the whole feed again, giving back what the server lost when it lost this device's
/// own statement; a finding that round still makes stands, thrown once the round committed. Not
/// saved: a new process checks the statements again.
struct StatementFindings: Sendable, Equatable {
    /// Whether the next round reads the whole feed again, and whether that resync gives back what
    /// the server lost (decisions 0203, 0248).
    private(set) var resyncsNext = false
    private(set) var givesBackNext = false
    /// Whether the round in progress reads the whole feed again after such a finding.
    private(set) var readsWholeFeed = false
    /// A finding the round's full resync did not clear: thrown once the round committed.
    private(set) var standing: String?

    /// A round starts; `readingWholeFeed`: its first request reads the whole feed (a resync asked
    /// for waits while a batch is unanswered, and is asked again by the next round).
    mutating func roundStarts(readingWholeFeed: Bool) {
        readsWholeFeed = resyncsNext && readingWholeFeed
        resyncsNext = resyncsNext && !readsWholeFeed
        givesBackNext = givesBackNext && !readsWholeFeed
        standing = nil
    }

    /// The server no longer holds this device's latest statement (R59): what it held when it
    /// took that statement may be lost too. The round goes on, so what it pushed is committed
    /// first, and fails then.
    mutating func ownStatementLost(_ reason: String) {
        resyncsNext = true
        givesBackNext = true
        standing = reason
    }

    /// The state served falls short of a statement (R62): the next round reads the whole feed.
    mutating func fellShort() { resyncsNext = true }

    /// The state served after reading the whole feed still falls short: `reason` stands.
    mutating func stillShort(_ reason: String) { standing = reason }

    /// The server said it went back to a backup (R58): a lost statement (`lostStatement`) is
    /// explained, and the resync that follows gives back what it lost.
    mutating func restoreAnnounced(explaining lostStatement: String) {
        guard standing == lostStatement else { return }
        standing = nil
        resyncsNext = false
        givesBackNext = false
    }
}

import KeychainCrypto

/// What the check of the zone's statements asks of the rounds (R59, R62): a finding sends the next
/// round to read the whole feed again, giving back what the server lost when it lost this device's
/// own statement or another device states it was served less than it (then the same `sync` runs
/// that round, and reports the finding once it gave back); a finding that round still makes
/// stands, thrown once the round committed, and is stated. Not saved: a new process checks the
/// statements again, and starts with the whole read when the zone has a finding recorded
/// (``ZoneDriver`` `init`).
struct StatementFindings: Sendable, Equatable {
    /// Whether the next round reads the whole feed again, and whether that resync gives back what
    /// the server lost (decisions 0203, 0248).
    private(set) var resyncsNext = false
    private(set) var givesBackNext = false
    /// Whether the round in progress reads the whole feed again after such a finding.
    private(set) var readsWholeFeed = false
    /// A finding the round's full resync did not clear: thrown once the round committed.
    private(set) var standing: String?
    /// The statement that finding fell short of: named in the statement the round publishes, so
    /// its device gives back what the server no longer holds (decision 0287).
    private(set) var shortOf: ZoneStatement.Reference?
    /// The finding the next round gives back for: it stands again once that round committed.
    private var givenBackFor: String?

    /// A round starts; `readingWholeFeed`: its first request reads the whole feed (a resync asked
    /// for waits while a batch is unanswered, and is asked again by the next round).
    mutating func roundStarts(readingWholeFeed: Bool) {
        readsWholeFeed = resyncsNext && readingWholeFeed
        let givesBack = givesBackNext && readsWholeFeed
        resyncsNext = resyncsNext && !readsWholeFeed
        givesBackNext = givesBackNext && !readsWholeFeed
        standing = givesBack ? givenBackFor : nil
        if givesBack { givenBackFor = nil }
        shortOf = nil
    }

    /// The server no longer holds this device's latest statement (R59): what it held when it
    /// took that statement may be lost too. The round goes on, so what it pushed is committed
    /// first, and fails then.
    mutating func ownStatementLost(_ reason: String) {
        resyncsNext = true
        givesBackNext = true
        standing = reason
        givenBackFor = reason
    }

    /// The state served falls short of a statement (R62): the next round reads the whole feed.
    mutating func fellShort() { resyncsNext = true }

    /// The state served after reading the whole feed still falls short of `statement`: `reason` stands.
    mutating func stillShort(_ reason: String, of statement: ZoneStatement.Reference) {
        standing = reason
        shortOf = statement
    }

    /// Another device's statement names this device's latest as one it was served less than,
    /// also after reading the whole feed (decision 0287): the server no longer serves what this
    /// device stated. As when it lost this device's own statement: the next round reads the whole
    /// feed giving back, and publishes.
    mutating func servedLessThanStated(_ reason: String) { ownStatementLost(reason) }

    /// The server said it went back to a backup (R58): a lost statement (`lostStatement`) is
    /// explained, and the resync that follows gives back what it lost.
    mutating func restoreAnnounced(explaining lostStatement: String) {
        guard standing == lostStatement else { return }
        standing = nil
        givenBackFor = nil
        resyncsNext = false
        givesBackNext = false
    }
}

import KeychainModel
import KeychainStore

/// For a zone that never pulled, the items that hold exactly the version an apply left them at
/// (their version tag unchanged, decision 0175), read once and kept current as the journal is
/// read: an entry after the read is a local write since, so its item no longer counts.
///
/// One read serves the resync: ``KeychainZone/itemsAhead(of:position:appliesCovered:)`` finds the
/// items held ahead in it, and every page of the journal the items a sync removed (read again for
/// each page, a device over 10,000 items read the whole table once per 1,000 entries).
struct UnchangedItems {
    /// The journal's newest entry when the read began.
    let journalHead: Int64
    /// The items unchanged at the read that nothing journaled since.
    private(set) var keys: Set<PrimaryKey>
    /// Of those, the ones gone at the read: a sync's deletion or `leave` removed them.
    private(set) var gone: Set<PrimaryKey>

    /// Reads the keychain's unchanged versions and the items it holds.
    /// - Returns: The items, and the read's version of each (its tag, the server's version, the
    ///   version sent).
    static func read(from keychain: Keychain) throws -> (items: UnchangedItems, versions: [PrimaryKey: UnchangedRemoteVersion]) {
        // Read first: a write after it has a later entry, whichever of the reads below saw it.
        let journalHead = try keychain.latestJournalSequence()
        let versions = try keychain.unchangedRemoteVersions()
        let held = versions.isEmpty ? [] : Set(try keychain.synchronizableItems().map(\.key))
        let keys = Set(versions.keys)
        return (UnchangedItems(journalHead: journalHead, keys: keys, gone: keys.subtracting(held)), versions)
    }

    /// Forgets the items a page of the journal names after the read: written since.
    mutating func forgetWrites(in entries: [JournalEntry]) {
        for entry in entries where entry.sequence > journalHead {
            keys.remove(entry.primaryKey)
            gone.remove(entry.primaryKey)
        }
    }
}

import Foundation
import KeychainCrypto
import KeychainModel
import KeychainStore
import SyncCore

/// The keychain as the local side of its zone: local changes come from the keychain's change
/// journal, pulled versions are applied with ``Keychain/applyRemote(_:basedOnJournal:versions:)``
/// (history kept), and each apply records the version it left an item at, in its own
/// transaction (decision 0107).
package struct KeychainZone: ZoneLocalStore {
    package let keychain: Keychain
    private let sealer: VersionSealer
    /// The owner of the version tags this enrolment's applies record.
    private let owner: String
    /// The primary keys of the items the keychain holds ahead of the committed state.
    private var aheadKeys: [ItemID: PrimaryKey] = [:]
    /// Of those, the ones this enrolment's applies left ahead, with the version each took (nil
    /// when its tag does not read: never caught up), until a state holds it
    /// (``coveredApplies(by:)``); nil when not known (the last read failed).
    private var aheadOfOwnApplies: [ItemID: VersionVector?]?
    /// For the items held ahead of a state that never pulled, the versions the server had that
    /// the keychain holds exactly: a listing older than one is refused (decision 0243).
    package private(set) var appliedAhead: [ItemID: [VersionVector]] = [:]
    /// For a state that never pulled, the items whose value is exactly a version an earlier
    /// enrolment pushed and never had the answer to: taken as that version (decision 0247).
    private var sentBefore: [PrimaryKey: ItemVersion] = [:]
    package private(set) var sentAhead: Set<ItemID> = []
    /// The items decoded while opening the last page, so applying them does not decode again.
    private var decoded: [ItemID: (content: [UInt8], item: Item)] = [:]
    /// The primary keys of the items taken as local changes and not yet acknowledged: an item's ID
    /// is its primary key's HMAC, so the key an apply needs for a version pushed or sent is found
    /// here instead of by decoding the version's content (issue 35).
    private var takenKeys: [ItemID: PrimaryKey] = [:]
    /// The items a first pass over the whole keychain read, and the journal's newest entry before
    /// it read them: their journal entries up to there are covered by that read, and are not
    /// read again.
    private var firstPass: (upTo: Int64, keys: Set<PrimaryKey>)?
    /// For a state that never pulled, the items exactly as an apply left them, read once for the
    /// resync (``UnchangedItems``); nil once the zone pulled, or until read.
    private var unchanged: UnchangedItems?

    package init(keychain: Keychain, sealer: VersionSealer, device: DeviceID) {
        self.keychain = keychain
        self.sealer = sealer
        owner = device.rawValue
    }

    package func itemID(of primaryKey: PrimaryKey) -> ItemID { sealer.itemID(of: primaryKey) }

    /// The state file keeps its copies of "when unlocked" items under their class (decision 0237).
    package var stateClassLayer: StateClassLayer? { StateClassLayer(keychain: keychain) }

    // MARK: - Local changes

    /// The journal's entries after `position`, a page of them. Without any sync state (a new
    /// device, re-enrolment, a lost state file), first every synchronizable item of the keychain:
    /// the journal does not hold the items that were pulled (decision 0106).
    package mutating func takeLocalChanges(
        after position: Int64, into machine: inout ZoneSyncMachine, timeBound: ModificationTimeBound
    ) throws -> LocalChanges? {
        var items: [ItemID] = []
        let neverPulled = machine.state.cursor == 0
        if !neverPulled {
            unchanged = nil
        } else if unchanged == nil {
            unchanged = try UnchangedItems.read(from: keychain).items
        }
        if position == 0, neverPulled, machine.state.records.isEmpty {
            // Read before the items: every entry up to it is covered by the read that follows.
            let journalHead = try keychain.latestJournalSequence()
            let applied = unchangedAhead()
            // Opened, identified and encoded on every core: pure work on each of possibly 10,000
            // items, before the machine takes them in turn (issue 35).
            let (sealed, sealer) = (try keychain.sealedSynchronizableItems(), sealer)
            let found = try ParallelWork.results(sealed.count) { index in
                Result { () throws(KeychainError) in
                    try sealed.item(at: index, skipping: applied).map { found in
                        (found.key, found.item, Prepared(item: sealer.itemID(of: found.key), content: ItemContent.encode(found.item)))
                    }
                }
            }.compactMap { try $0.get() }
            let keys = found.map(\.0)
            firstPass = (journalHead, Set(keys))
            let basedOn = try appliedVersions(of: keys, anyEnrolment: true)
            for (key, item, prepared) in found {
                items.append(localChange(
                    of: key, current: item, at: item.attributes.modificationDate ?? Date(), basedOn: basedOn[key],
                    sentBefore: sentBefore[key], prepared: prepared, into: &machine, timeBound: timeBound))
            }
            // Nothing the machine took (no item, or none that leaves the device): the journal only.
            if machine.state.records.isEmpty { items.removeAll() }
        }
        // The entries the first pass covered are not opened at all while their items are still
        // there (up to where `unchanged` was read: it forgets the items written after).
        let limit = 1000
        let heldUpTo = firstPass.map { min($0.upTo, unchanged?.journalHead ?? $0.upTo) } ?? 0
        let entries = try keychain.journalEntries(after: position, limit: limit, omittingHeldUpTo: heldUpTo)
        let readUpTo = entries.count < limit ? max(entries.last?.sequence ?? position, heldUpTo) : entries.last?.sequence ?? position
        unchanged?.forgetWrites(in: entries)
        // Never pulled: the entries of an item still exactly as a sync left it are all older than
        // that sync. One it holds is not a change: it is marked as held ahead of the state
        // (``itemsAhead(of:position:appliesCovered:)``), so the resync replaces, removes or reports
        // it (decision 0175); one a sync's deletion or `leave` removed is not the user's deletion
        // (a re-enrolment after `leave` deleted on every device what this device had once
        // written). A write since the driver listed it is a change like any other (0186).
        let skipped = unchangedAhead().union(unchanged?.gone ?? [])
        var latest: [PrimaryKey: JournalEntry] = [:]
        var order: [PrimaryKey] = []
        if let firstPass, position >= firstPass.upTo { self.firstPass = nil }
        for entry in entries where entry.primaryKey.isSynchronizable && !skipped.contains(entry.primaryKey) {
            // An item the first pass read after this entry: its value then is what the machine has.
            if let firstPass, entry.sequence <= firstPass.upTo, firstPass.keys.contains(entry.primaryKey) { continue }
            if latest.updateValue(entry, forKey: entry.primaryKey) == nil { order.append(entry.primaryKey) }
        }
        let current = try keychain.items(withPrimaryKeys: order)
        let basedOn = try appliedVersions(of: order, anyEnrolment: neverPulled)
        for key in order {
            guard let entry = latest[key] else { continue }
            items.append(localChange(of: key, current: current[key], at: entry.time, basedOn: basedOn[key], into: &machine, timeBound: timeBound))
        }
        guard readUpTo > position || !items.isEmpty else { return nil }
        return LocalChanges(position: readUpTo, items: items)
    }

    /// Of the items held ahead of a state that never pulled, the ones still exactly the version an
    /// earlier sync applied.
    private func unchangedAhead() -> Set<PrimaryKey> {
        guard let unchanged, !aheadKeys.isEmpty else { return [] }
        return unchanged.keys.intersection(aheadKeys.values)
    }

    /// An item's ID and encoded content, computed ahead of ``localChange(of:current:at:basedOn:sentBefore:prepared:into:timeBound:)``.
    private struct Prepared: Sendable {
        var item: ItemID
        var content: [UInt8]
    }

    /// The machine takes the change of `primaryKey`, whose item is `current` (read after the
    /// journal entries that led here; nil: removed), written over `basedOn` (``appliedVersions(of:anyEnrolment:)``),
    /// or exactly the version `sentBefore` (an earlier enrolment's push whose answer never came);
    /// `prepared`: the item's ID and `current`'s content, when computed already.
    private mutating func localChange(
        of primaryKey: PrimaryKey, current: Item?, at time: Date, basedOn: VersionVector?, sentBefore: ItemVersion? = nil,
        prepared: Prepared? = nil, into machine: inout ZoneSyncMachine, timeBound: ModificationTimeBound
    ) -> ItemID {
        let item = prepared?.item ?? itemID(of: primaryKey)
        let basedOn = basedOn ?? VersionVector()
        guard let current, current.isSynchronizable else {
            _ = machine.localChange(LocalChange(
                item: item, scope: .synchronizable, content: nil, modifiedAt: Self.stamp(time, timeBound), basedOn: basedOn))
            return item
        }
        let content = prepared?.content ?? ItemContent.encode(current)
        if let record = machine.state.records[item], !record.version.isDeleted, record.version.content == content { return item }
        let scope: LocalChange.Scope = current.accessibility.isThisDeviceOnly ? .thisDeviceOnly : .synchronizable
        if scope == .synchronizable { takenKeys[item] = primaryKey }
        _ = machine.localChange(LocalChange(
            item: item, scope: scope, content: content, modifiedAt: Self.stamp(current.attributes.modificationDate ?? time, timeBound),
            basedOn: basedOn, sentBefore: sentBefore))
        return item
    }

    /// A local change's stamp: its time on this device's clock, bounded by the server's (0108).
    private static func stamp(_ date: Date, _ timeBound: ModificationTimeBound) -> Int64 {
        timeBound.bounded(ZoneTransport.milliseconds(date))
    }

    /// The version this enrolment's last apply left each of `primaryKeys` at, as the keychain
    /// recorded it in that apply's transaction: ahead of the committed state after a crash between
    /// the two commits (decision 0107); one read for a page. Missing when this enrolment never
    /// applied the item. A device without sync state takes an earlier enrolment's too (0175).
    private func appliedVersions(of primaryKeys: [PrimaryKey], anyEnrolment: Bool) throws -> [PrimaryKey: VersionVector] {
        try keychain.remoteVersionTags(of: primaryKeys, owner: anyEnrolment ? nil : owner)
            .compactMapValues { try? VersionVector(canonicalEncoding: $0) }
    }

    package func hasLocalChanges(after position: Int64, state: ZoneSyncState) throws -> Bool {
        try !keychain.journalEntries(after: position, limit: 1).isEmpty
    }

    package func hasSyncedBefore() throws -> Bool {
        try keychain.hasRemoteVersionTags()
    }

    /// The items the keychain took a version of that `state` does not hold (a crash between the
    /// two commits): their next pulled version is applied even when the state already shows its
    /// value (decision 0107).
    ///
    /// Without sync state (never pulled: a re-enrolment, a lost state file) these are the items
    /// that hold exactly a version any earlier sync applied: the device does not know whether
    /// the server still has it, so the resync decides (decision 0175).
    ///
    /// A state committed when every version the keychain's applies left was held
    /// (`appliesCovered`, decision 0279) has nothing of this enrolment's ahead while the keychain
    /// counts no more applies: then only what earlier enrolments left is read.
    package mutating func itemsAhead(of state: ZoneSyncState, position: Int64, appliesCovered: Int64?) throws -> Set<ItemID> {
        aheadKeys.removeAll()
        appliedAhead.removeAll()
        sentBefore.removeAll()
        sentAhead.removeAll()
        aheadOfOwnApplies = nil
        unchanged = nil
        let tags: [PrimaryKey: [UInt8]]
        var serverVersions: [PrimaryKey: [UInt8]] = [:]
        var earlierKeys: Set<PrimaryKey> = []
        // The rows whose tagged version was sent or pushed from here (R27's restart mark).
        let sentKeys: Set<PrimaryKey>
        if state.cursor == 0 {
            // Only the items still here (a tag stays after a removal); a keychain that never
            // synced has no tags and is not listed. The same read serves the journal's pages.
            let (read, unchanged) = try UnchangedItems.read(from: keychain)
            self.unchanged = read
            var kept = unchanged.filter { !read.gone.contains($0.key) }
            sentKeys = Set(kept.lazy.filter { $0.value.sentVersion != nil }.map(\.key))
            // Pushed from here, answered or not: a local change, taken as that version (decision
            // 0247): a server that has it answers that it does, one that lost it gets it back, and
            // one that holds a later version or a deletion over it supersedes it (decision 0253).
            // Only for an item the state does not know: one it knows (a crash between the two
            // commits of its first round) is ahead of the state like any other (rule R56).
            for (key, version) in kept where state.records[itemID(of: key)] == nil {
                guard let sent = version.sentVersion.flatMap(SentVersionRecord.decode) else { continue }
                sentBefore[key] = sent
                kept[key] = nil
            }
            tags = kept.mapValues(\.tag)
            for (key, version) in kept {
                guard let server = version.serverVersion, let vector = try? VersionVector(canonicalEncoding: server) else { continue }
                appliedAhead[itemID(of: key)] = [vector]
            }
            // Gone since a sync removed it (its journal entries are not taken, ``UnchangedItems/gone``):
            // nothing is held, but what the removal's tag saw bounds the listings (R35), so a
            // replay of an earlier version is not taken for the item (malicious seed 5 at 400).
            for (key, version) in unchanged where read.gone.contains(key) && state.records[itemID(of: key)] == nil {
                if let vector = try? VersionVector(canonicalEncoding: version.tag) { appliedAhead[itemID(of: key)] = [vector] }
            }
        } else {
            let covered = try appliesCovered.map { try $0 == keychain.remoteApplyCount() } ?? false
            var own = covered ? [:] : try keychain.remoteVersionTags(owner: owner)
            // An item an earlier enrolment took, unchanged since and unknown to this state: a
            // resync no longer listed it and it was kept (decision 0106). The store holds it
            // still, so a version listed later is applied to it, a deletion above all (0194).
            let earlier = try keychain.unchangedRemoteVersions(notOwnedBy: owner).filter { key, _ in
                state.records[itemID(of: key)] == nil
            }
            let held = earlier.isEmpty ? [] : Set(try keychain.synchronizableItems().map(\.key))
            for (key, version) in earlier where held.contains(key) {
                own[key] = (version.tag, version.serverVersion, false)
                earlierKeys.insert(key)
            }
            sentKeys = Set(own.lazy.filter(\.value.wasSent).map(\.key))
            tags = own.mapValues(\.tag)
            // Unless the server's versions it took dominate the listing (a replay, R35): for a
            // copy an earlier enrolment kept, and for one this enrolment took before a crash
            // between the two commits, a resolution's too (malicious seed 329 at 400 operations:
            // a replayed earlier version undid such a resolution, and the value came back later).
            // Decoded below for the items ahead only.
            serverVersions = own.compactMapValues(\.serverVersion)
        }
        var aheadOfOwn: [ItemID: VersionVector?] = [:]
        for (key, tag) in tags {
            let item = itemID(of: key)
            let record = state.records[item]
            let applied = try? VersionVector(canonicalEncoding: tag)
            // Sent since the state was committed: perhaps on the server though the state never
            // named the batch (R27, R32).
            if sentKeys.contains(key), let record, record.isPending, record.version.vector == applied { sentAhead.insert(item) }
            // A state that has seen the tagged version (or more) holds what the keychain took.
            if let applied, (record?.seen ?? VersionVector()).descends(from: applied) { continue }
            aheadKeys[item] = key
            if let server = serverVersions[key].flatMap({ try? VersionVector(canonicalEncoding: $0) }) { appliedAhead[item] = [server] }
            if !earlierKeys.contains(key) { aheadOfOwn[item] = .some(applied) }
        }
        aheadOfOwnApplies = aheadOfOwn
        return Set(aheadKeys.keys)
    }

    /// Nothing is ahead of a state whose count of applies is the keychain's (decision 0279) while
    /// no copy an earlier enrolment took waits unchanged: what ``itemsAhead(of:position:appliesCovered:)``
    /// reads then, each to be matched against the state's records.
    package mutating func holdsNothingAhead(appliesCovered: Int64?) throws -> Bool {
        guard let appliesCovered, try appliesCovered == keychain.remoteApplyCount(),
            try !keychain.hasUnchangedRemoteVersions(notOwnedBy: owner)
        else { return false }
        aheadKeys.removeAll()
        appliedAhead.removeAll()
        sentBefore.removeAll()
        unchanged = nil
        aheadOfOwnApplies = [:]
        return true
    }

    /// The keychain's count of applies once `state` has seen every version found ahead of the
    /// state before (decision 0279): the versions this process's own applies left are in the
    /// state it commits next, so nothing of this enrolment's is ahead of that state.
    package mutating func coveredApplies(by state: ZoneSyncState) throws -> Int64? {
        guard let ahead = aheadOfOwnApplies else { return nil }
        let stillAhead = ahead.filter { item, applied in
            guard let applied, let seen = state.records[item]?.seen else { return true }
            return !seen.descends(from: applied)
        }
        aheadOfOwnApplies = stillAhead
        return stillAhead.isEmpty ? try keychain.remoteApplyCount() : nil
    }

    // MARK: - Pulled versions

    package mutating func accepts(_ content: [UInt8], for item: ItemID) -> Bool {
        guard let decodedItem = ItemContent.decode(content), itemID(of: decodedItem.primaryKey) == item else { return false }
        decoded[item] = (content, decodedItem)
        return true
    }

    /// True for an item whose accessibility class is locked away now (decision 0137).
    /// One read of the lock state; while nothing is locked away, nothing is decoded per item.
    package func unlockWait() -> UnlockWait {
        // Unreadable key state: nothing is held; the apply that follows reports the error.
        guard let unavailable = try? keychain.unavailableProtectionClasses(), !unavailable.isEmpty else { return .never }
        return UnlockWait { content, _ in
            ItemContent.decode(content).map { unavailable.contains($0.accessibility.protectionClass) } ?? false
        }
    }

    package mutating func apply(_ apply: LocalApply) throws -> LocalApplyOutcome {
        var changes: [RemoteChange] = []
        var tags: [PrimaryKey: [UInt8]] = [:]
        var pushed: [PrimaryKey: [UInt8]] = [:]
        var replaced: [PrimaryKey: [UInt8]] = [:]
        var serverVersions: [PrimaryKey: [UInt8]] = [:]
        var sent: [PrimaryKey: RemoteVersionTags.Sent] = [:]
        var pushedVersions: [PrimaryKey: [UInt8]] = [:]
        var problems: [ItemID: String] = [:]
        changes += try heldAheadReplacedUnseen(by: apply)
        for effect in apply.effects {
            try Self.refuseSealedAway(effect, committed: apply.committed)
            switch effect {
            case .store(let item, let version):
                let cached = decoded[item].flatMap { $0.content == version.content ? $0.item : nil }
                guard let remote = cached ?? ItemContent.decode(version.content), remote.isSynchronizable,
                    !remote.accessibility.isThisDeviceOnly
                else {
                    problems[item] = "its content is not a synchronizable keychain item"
                    continue
                }
                changes.append(.store(remote))
                let key = remote.primaryKey
                tags[key] = apply.state.records[item]?.seen.canonicalEncoding
                if let server = apply.serversVersions(of: item) { serverVersions[key] = server.canonicalEncoding }
                pushed.forget(key)
                replaced.forget(key)
                sent.forget(key)
            case .remove(let item):
                // The state was committed right before the request whose answer removed it.
                let key = apply.committed.records[item].flatMap { primaryKey(of: $0.version) } ?? aheadKeys[item]
                guard let key else { continue }
                changes.append(.delete(key))
                tags[key] = apply.state.records[item]?.seen.canonicalEncoding
                // The deletion the store took bounds later listings as a stored version does (R54):
                // a restored server's older version is refused, not stored over it.
                if let server = apply.serversVersions(of: item) { serverVersions[key] = server.canonicalEncoding }
                pushed.forget(key)
                replaced.forget(key)
                sent.forget(key)
            case .keepInHistory(let item, let version):
                guard let loser = ItemContent.decode(version.content) else {
                    problems[item] = "a losing version's content cannot be read"
                    continue
                }
                changes.append(.keepInHistory(loser, versionTag: version.vector.canonicalEncoding))
            case .pushed(let item, let version):
                guard !version.isDeleted, let key = takenKeys.removeValue(forKey: item) ?? primaryKey(of: version) else { continue }
                tags.forget(key)
                replaced.forget(key)
                sent.forget(key)
                pushed[key] = version.vector.canonicalEncoding
                pushedVersions[key] = SentVersionRecord.encode(version)
            case .sent(let item, let version):
                guard !version.isDeleted, let key = takenKeys[item] ?? primaryKey(of: version) else { continue }
                tags.forget(key)
                replaced.forget(key)
                pushed.forget(key)
                sent[key] = .init(tag: version.vector.canonicalEncoding, version: SentVersionRecord.encode(version))
                if let server = apply.serversVersions(of: item) { serverVersions[key] = server.canonicalEncoding } else { serverVersions.forget(key) }
            case .writtenOver(let item, let overwritten):
                // Only while the write is still the local value (a deletion leaves nothing to recover).
                guard let record = apply.state.records[item], record.isPending, !record.version.isDeleted,
                    let key = primaryKey(of: record.version)
                else { continue }
                tags.forget(key)
                pushed.forget(key)
                sent.forget(key)
                replaced[key] = overwritten.canonicalEncoding
            }
        }
        decoded.removeAll(keepingCapacity: true)
        let outcome = try keychain.applyRemote(
            changes, basedOnJournal: apply.position, versions: RemoteVersionTags(
                owner: owner, tags: tags, pushed: pushed, replaced: replaced, serverVersions: serverVersions, sent: sent,
                pushedVersions: pushedVersions))
        if case .changedLocally(let keys) = outcome { return .changedLocally(count: keys.count) }
        return .applied(problems: problems)
    }

    /// The primary key of the item whose content `version` holds; nil for content that does not decode.
    private func primaryKey(of version: ItemVersion) -> PrimaryKey? {
        ItemContent.decode(version.content)?.primaryKey
    }

    /// The items held ahead of the state, with the server's versions their values were decided
    /// from (``appliedAhead``), that `apply` replaces or removes by a version that never saw them
    /// (deleted and collected since, or lost by the server, decision 0248): their values kept in
    /// history first, as a machine keeps a value it had and the server no longer lists.
    private func heldAheadReplacedUnseen(by apply: LocalApply) throws -> [RemoteChange] {
        guard !appliedAhead.isEmpty else { return [] }
        var replaced: [PrimaryKey: VersionVector] = [:]
        for effect in apply.effects {
            let item: ItemID, version: ItemVersion?
            switch effect {
            case .store(let stored, let new): (item, version) = (stored, new)
            case .remove(let removed): (item, version) = (removed, apply.state.records[removed]?.version)
            default: continue
            }
            guard let held = appliedAhead[item]?.first, let key = aheadKeys[item], let version, !version.vector.descends(from: held) else { continue }
            replaced[key] = held
        }
        guard !replaced.isEmpty else { return [] }
        return try keychain.items(withPrimaryKeys: Array(replaced.keys)).compactMap { key, item in
            replaced[key].map { .keepInHistory(item, versionTag: $0.canonicalEncoding) }
        }
    }

    /// The driver holds every arrival of an item whose state copy is still sealed under its class
    /// (decision 0237), so no effect needs such a content; one that does stops the apply rather
    /// than skip the item.
    private static func refuseSealedAway(_ effect: LocalApply.Effect, committed: ZoneSyncState) throws {
        let content: [UInt8]?
        switch effect {
        case .store(_, let version), .keepInHistory(_, let version), .pushed(_, let version): content = version.content
        case .remove(let item), .writtenOver(let item, _): content = committed.records[item]?.version.content
        // A version sealed away is not pushed; recording one it cannot read is skipped.
        case .sent: content = nil
        }
        if let content, StateClassLayer.isSealedAway(content) {
            throw SyncClientError(.keychainLocked, "the keychain is locked; a \"when unlocked\" item waits for the unlock")
        }
    }
}

private extension Dictionary {
    /// Removes `key`; an empty dictionary (most of an apply's are) does not hash it.
    mutating func forget(_ key: Key) {
        if !isEmpty { self[key] = nil }
    }
}

import KeychainCrypto
import KeyValueStore
import SyncCore

/// A key-value store as the local side of its zone (decisions 0062, 0070, 0170): a key's item
/// ID is the account's HMAC of its name, so the server never sees a key; the payload (sealed) is
/// the key and its canonical value. Key-value stores keep no history (as Apple's): a losing value
/// is not kept.
package struct KeyValueZone: ZoneLocalStore {
    package let store: KeyValueStore
    private let keys: AccountKeys
    /// The key of every item the store has a version of (a tombstone's content is empty, so its
    /// key is found here).
    private var keyByItem: [ItemID: String] = [:]
    /// The keys held ahead of a state that never pulled: values the server has (decision 0186).
    private var aheadKeys: Set<String> = []
    /// The versions the store holds from the server for the items found ahead of the state.
    package private(set) var appliedAhead: [ItemID: [VersionVector]] = [:]
    /// Of a state that never pulled, the keys whose value this device pushed (the server took it,
    /// or its answer never came): taken as local changes, each as that version (0247, 0253).
    private var sentBefore: [String: ItemVersion] = [:]
    package private(set) var sentAhead: Set<ItemID> = []

    package init(store: KeyValueStore, keys: AccountKeys) throws(KeyValueStoreError) {
        self.store = store
        self.keys = keys
        for key in try store.allKeys() { keyByItem[itemID(key)] = key }
    }

    package func itemID(_ key: String) -> ItemID {
        keys.itemID(zone: store.zone.rawValue, fields: KeyValueStore.itemIDFields(forKey: key))
    }

    package mutating func takeLocalChanges(
        after position: Int64, into machine: inout ZoneSyncMachine, timeBound: ModificationTimeBound
    ) throws -> LocalChanges? {
        var taken: [(ItemID, String)] = []
        // Never pulled: a value the server has (from an earlier enrolment's sync) is not a change,
        // and neither are its journal entries: it is held ahead of the state (decision 0186).
        let held = machine.state.cursor == 0 && !aheadKeys.isEmpty ? aheadKeys.intersection(try store.syncedKeys()) : []
        let last = try store.takeLocalChanges(after: position) { key, current, modifiedAt in
            if held.contains(key) { return nil }
            let item = itemID(key)
            taken.append((item, key))
            let content = current?.value.map { KeyVersion.syncContent(key: key, value: $0) }
            if let record = machine.state.records[item], content == nil ? record.version.isDeleted : record.version.content == content {
                return record.version
            }
            // The store wrote the change over every version it held, which may be one the state
            // never committed (a crash between the two commits; decision 0107).
            let basedOn = current?.version.overwritten ?? VersionVector()
            _ = machine.localChange(LocalChange(
                item: item, scope: .synchronizable, content: content, modifiedAt: timeBound.bounded(current?.modifiedAt ?? modifiedAt), basedOn: basedOn,
                sentBefore: machine.state.cursor == 0 ? sentBefore[key] : nil))
            return machine.state.records[item]?.version
        }
        // Never pulled: a value pushed from here that no journal entry names (a resolution its
        // engine made, never a user's write) is taken as that version too (R53), as the keychain's
        // first pass takes every item; else the state never knew it, and a deletion listed later
        // removed nothing from the store.
        var unjournaled = false
        for (item, key, version) in sentWithoutEntries(in: machine.state, besides: Set(taken.map(\.1))) {
            _ = machine.localChange(LocalChange(
                item: item, scope: .synchronizable, content: version.content, modifiedAt: version.modifiedAt, basedOn: version.overwritten,
                sentBefore: version))
            taken.append((item, key))
            unjournaled = true
        }
        for (item, key) in taken { keyByItem[item] = key }
        guard last != nil || unjournaled else { return nil }
        return LocalChanges(position: last ?? position, items: taken.map(\.0))
    }

    /// Of a state that never pulled, the values pushed from here that it has no record of, but
    /// those of `keys` (taken from the journal).
    private func sentWithoutEntries(in state: ZoneSyncState, besides keys: Set<String>) -> [(ItemID, String, ItemVersion)] {
        guard state.cursor == 0 else { return [] }
        return sentBefore.sorted { $0.key < $1.key }.compactMap { key, version in
            let item = itemID(key)
            return keys.contains(key) || state.records[item] != nil ? nil : (item, key, version)
        }
    }

    package func hasLocalChanges(after position: Int64, state: ZoneSyncState) throws -> Bool {
        try !store.journalEntries(after: position, limit: 1).isEmpty || !sentWithoutEntries(in: state, besides: []).isEmpty
    }

    package func hasSyncedBefore() throws -> Bool {
        try !store.takenVectors(notChangedAfter: .max).isEmpty
    }

    /// The keys whose versions `state` has not seen, leaving out local changes not taken yet.
    package mutating func itemsAhead(of state: ZoneSyncState, position: Int64, appliesCovered: Int64?) throws -> Set<ItemID> {
        var ahead: Set<ItemID> = []
        aheadKeys.removeAll()
        appliedAhead.removeAll()
        sentBefore.removeAll()
        sentAhead.removeAll()
        if state.cursor == 0 {
            // Without sync state: the values the server has, as an earlier sync left them; those
            // pushed from here are local changes, taken as the versions they were (0253).
            sentBefore = try store.pushedVersions()
            for (key, version) in sentBefore {
                let item = itemID(key)
                if let record = state.records[item], record.isPending, record.version.vector == version.vector { sentAhead.insert(item) }
            }
            for key in try store.syncedKeys() where sentBefore[key] == nil {
                let item = itemID(key)
                guard state.records[item] == nil else { continue }
                keyByItem[item] = key
                aheadKeys.insert(key)
                ahead.insert(item)
                appliedAhead[item] = try store.siblingVersions(forKey: key).map(\.version.vector)
            }
        }
        for (key, taken) in try store.takenVectors(notChangedAfter: position) where sentBefore[key] == nil {
            let item = itemID(key)
            keyByItem[item] = key
            if let record = state.records[item], record.isPending, taken.sent.contains(record.version.vector) { sentAhead.insert(item) }
            if !(state.records[item]?.seen ?? VersionVector()).descends(from: taken.vector) {
                ahead.insert(item)
                // Only what the server has bounds its listings: a resolution made here and not
                // pushed yet is not on the server (decision 0242).
                if let server = taken.serverVector { appliedAhead[item, default: []].append(server) }
            }
        }
        return ahead
    }

    package func accepts(_ content: [UInt8], for item: ItemID) -> Bool {
        guard let (key, _) = try? KeyVersion.decodeSyncContent(content) else { return false }
        return itemID(key) == item
    }

    package mutating func apply(_ apply: LocalApply) throws -> LocalApplyOutcome {
        var versions: [KeyVersion] = []
        var learned: [ItemID: String] = [:]
        var notOnServer: Set<String> = []
        var pushed: [String: ItemVersion] = [:]
        var sent: [String: ItemVersion] = [:]
        for effect in apply.effects {
            switch effect {
            case .store(let item, let version):
                let key = try KeyVersion.decodeSyncContent(version.content).key
                learned[item] = key
                versions.append(try KeyVersion(key: key, version: version))
                if !apply.isServersVersion(version, of: item) { notOnServer.insert(key) }
            case .remove(let item):
                // A removal of a key this device never had changes nothing here.
                guard let key = keyByItem[item], let tombstone = apply.state.records[item]?.version else { continue }
                versions.append(try KeyVersion(key: key, version: tombstone))
            case .pushed(let item, let version):
                if let key = keyByItem[item] { pushed[key] = version }
            case .sent(let item, let version):
                if let key = keyByItem[item] { sent[key] = version }
            case .keepInHistory, .writtenOver:
                // A key-value store keeps each value's own vector: nothing to add.
                continue
            }
        }
        // Nothing to write (only losers, of which a store keeps no record): no transaction.
        guard !versions.isEmpty || !pushed.isEmpty || !sent.isEmpty else { return .applied(problems: [:]) }
        let reason: KeyValueChange.Reason = apply.isInitialSync ? .initialSyncChange : .serverChange
        let changed = try store.applyResolved(versions, notOnServer: notOnServer, pushed: pushed, sent: sent, reason: reason, basedOnJournal: apply.position)
        guard changed.isEmpty else { return .changedLocally(count: changed.count) }
        keyByItem.merge(learned) { _, new in new }
        return .applied(problems: [:])
    }
}

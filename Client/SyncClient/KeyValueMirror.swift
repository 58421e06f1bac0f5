import KeychainCrypto
import KeyValueStore
import SyncCore

/// A key-value store as the local side of its zone (decisions 0062, 0070): a key's item
/// ID is the account's HMAC of its name, so the server never sees a key; the payload (sealed) is
/// the key and its canonical value.
package struct KeyValueMirror: ZoneMirror {
    package let store: KeyValueStore
    private let keys: AccountKeys
    /// The key of every item the store has a version of (a tombstone's content is empty, so its
    /// key is found here).
    private var keyByItem: [ItemID: String] = [:]

    package init(store: KeyValueStore, keys: AccountKeys) throws(KeyValueStoreError) {
        self.store = store
        self.keys = keys
        for key in try store.allKeys() { keyByItem[itemID(key)] = key }
    }

    package func itemID(_ key: String) -> ItemID {
        keys.itemID(zone: store.zone.rawValue, fields: KeyValueStore.itemIDFields(forKey: key))
    }

    package mutating func takeLocalChanges(after position: Int64, into machine: inout ZoneSyncMachine, timeBound: ModificationTimeBound) throws -> Int64? {
        var taken: [(ItemID, String)] = []
        let last = try store.takeLocalChanges(after: position) { key, current, modifiedAt in
            let item = itemID(key)
            taken.append((item, key))
            let content = current?.value.map { KeyVersion.syncContent(key: key, value: $0) }
            if let record = machine.state.records[item], content == nil ? record.version.isDeleted : record.version.content == content {
                return record.version
            }
            // The store wrote the change over every version it held, which may be one the state
            // never committed (a crash between the mirror and the state commit; decision 0107).
            let basedOn = current?.version.overwritten ?? VersionVector()
            _ = machine.localChange(LocalChange(
                item: item, scope: .synchronizable, content: content, modifiedAt: timeBound.bounded(current?.modifiedAt ?? modifiedAt), basedOn: basedOn))
            return machine.state.records[item]?.version
        }
        for (item, key) in taken { keyByItem[item] = key }
        return last
    }

    package func hasLocalChanges(after position: Int64, state: ZoneSyncState) throws -> Bool {
        try !store.journalEntries(after: position, limit: 1).isEmpty
    }

    package func accepts(_ content: [UInt8], for item: ItemID) -> Bool {
        guard let (key, _) = try? KeyVersion.decodeSyncContent(content) else { return false }
        return itemID(key) == item
    }

    package mutating func mirror(
        _ record: ZoneSyncState.Record?, of item: ItemID, previous: ZoneSyncState.Record?, initial: Bool, position: Int64
    ) throws {
        let reason: KeyValueChange.Reason = initial ? .initialSyncChange : .serverChange
        guard let record else {
            if let key = keyByItem.removeValue(forKey: item) {
                try store.applyRemotePurge(ofKey: key, reason: reason, unlessChangedAfter: position)
            }
            return
        }
        let key: String
        if record.version.isDeleted {
            guard let known = keyByItem[item] else { return }  // a removal of a key this device never had
            key = known
        } else {
            key = try KeyVersion.decodeSyncContent(record.version.content).key
            keyByItem[item] = key
        }
        try store.mirror(KeyVersion(key: key, version: record.version), reason: reason, unlessChangedAfter: position)
    }
}

import KeychainCrypto
import KeyValueStore
import SyncCore

/// The directory of an account's key-value stores: zone `kv`, one item per store name (its
/// HMAC as the ID, the name sealed as the payload), never removed. A device learns from it which
/// stores exist, including stores it never wrote to (decision 0070).
package struct StoreDirectory: ZoneLocalStore {
    package static let zone = ZoneID("kv")

    /// The device's stores; `nil` while it has no key-value database.
    private let database: KeyValueDatabase?
    private let keys: AccountKeys

    package init(database: KeyValueDatabase?, keys: AccountKeys) {
        self.database = database
        self.keys = keys
    }

    package func itemID(_ name: String) -> ItemID {
        keys.itemID(zone: Self.zone.rawValue, fields: [(name: "store", value: Array(name.utf8))])
    }

    /// The server-side zone of store `name`: `kv.` and the first 128 bits of its directory item
    /// ID, so the server sees neither the store's name (an app's identifier) nor anything that
    /// links the zones of two accounts. Every store name makes a valid zone name.
    package func zone(ofStore name: String) -> ZoneID {
        ZoneID("kv." + itemID(name).rawValue.prefix(32))
    }

    /// What the key-value database is bound to (decision 0071): an HMAC under the account's
    /// item-ID key, the same on every device of the account, another for every other account
    /// (even one with the same name on the same server), and nothing the server ever sees.
    package var accountBinding: String {
        keys.itemID(zone: Self.zone.rawValue, fields: [(name: "account", value: [])]).rawValue
    }

    /// The store names the directory's records hold.
    package static func names(in records: [ItemID: ZoneSyncState.Record]) -> Set<String> {
        Set(records.values.compactMap { $0.version.isDeleted ? nil : String(validating: $0.version.content, as: UTF8.self) })
    }

    /// Adds every local store missing from the directory. The position is unused (always 0).
    package func takeLocalChanges(
        after position: Int64, into machine: inout ZoneSyncMachine, timeBound: ModificationTimeBound
    ) throws -> LocalChanges? {
        let missing = try (database?.storeNames() ?? []).filter { machine.state.records[itemID($0)] == nil }
        guard !missing.isEmpty else { return nil }
        for name in missing {
            _ = machine.localChange(LocalChange(item: itemID(name), scope: .synchronizable, content: Array(name.utf8), modifiedAt: 0))
        }
        return LocalChanges(position: position, items: missing.map(itemID))
    }

    package func hasLocalChanges(after position: Int64, state: ZoneSyncState) throws -> Bool {
        try (database?.storeNames() ?? []).contains { state.records[itemID($0)] == nil }
    }

    /// A store's name is never removed from the directory, so no copy of one can be stale.
    package func hasSyncedBefore() throws -> Bool { false }

    package func accepts(_ content: [UInt8], for item: ItemID) -> Bool {
        guard let name = String(validating: content, as: UTF8.self) else { return false }
        return itemID(name) == item
    }

    /// The directory lives in the machine's records only: nothing is ever ahead of them.
    package func itemsAhead(of state: ZoneSyncState, position: Int64, appliesCovered: Int64?) throws -> Set<ItemID> { [] }

    /// The directory lives in the machine's records only: there is nothing to apply.
    package func apply(_ apply: LocalApply) throws -> LocalApplyOutcome { .applied(problems: [:]) }
}

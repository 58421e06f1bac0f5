import GRDB

/// The account whose values a database's stores hold (docs/decisions/0071). Apple's store
/// resets itself when the iCloud account changes; here the sync client binds the database to
/// the enrolled account before every pass, and a different account resets every store first.
extension KeyValueDatabase {
    /// What ``bind(toAccount:)`` did.
    public enum AccountBinding: Hashable, Sendable {
        /// The database was bound to this account already.
        case unchanged
        /// The database was bound to no account (never synced): its values stay, to be synced
        /// to this account.
        case bound
        /// The database held another account's values: these stores were reset.
        case changed(resetStores: [String])
    }

    /// The account the stores hold the values of (an opaque identifier chosen by the sync
    /// client), or `nil` while the database was never bound.
    public func boundAccount() throws(KeyValueStoreError) -> String? {
        try read { db in try String.fetchOne(db, sql: "SELECT account FROM kv_account WHERE id = 1") }
    }

    /// Binds the database to `account`. When it was bound to another account, every store is
    /// reset in the same transaction (as ``KeyValueStore/resetForAccountChange()``: values,
    /// versions and journal go; each store's subscribers get an
    /// ``KeyValueChange/Reason/accountChange`` event with its keys), so no value of the previous
    /// account can be synced to the new one; a crash leaves either both or neither.
    /// - Parameter account: An opaque identifier of the account, the same on all its devices and
    ///   different for every account (the sync client derives it from the account key).
    public func bind(toAccount account: String) throws(KeyValueStoreError) -> AccountBinding {
        try write { db in
            let previous = try String.fetchOne(db, sql: "SELECT account FROM kv_account WHERE id = 1")
            guard previous != account else { return .unchanged }
            try db.execute(sql: "INSERT OR REPLACE INTO kv_account (id, account) VALUES (1, ?)", arguments: [account])
            guard previous != nil else { return .bound }
            let names = try String.fetchAll(db, sql: """
                SELECT store FROM kv_version UNION SELECT store FROM kv_value
                UNION SELECT store FROM kv_journal UNION SELECT store FROM kv_store_state ORDER BY store
                """)
            for name in names { try KeyValueStore(name: name, database: self).resetForAccountChange(db) }
            return .changed(resetStores: names)
        }
    }
}
